import { describe, expect, it } from 'vitest';
import { eventsForCall } from '../../src/domain/calls.js';

describe('eventsForCall', () => {
  it('fires new_conversation for an answered voice call', () => {
    expect(eventsForCall({ channel: 'voice', outcome: 'answered', spam: false })).toStrictEqual(['new_conversation']);
  });

  it('fires new_conversation and missed_call for a voicemail', () => {
    expect(eventsForCall({ channel: 'voice', outcome: 'voicemail', spam: false })).toStrictEqual(['new_conversation', 'missed_call']);
  });

  it('fires nothing for an immediate hang-up', () => {
    expect(eventsForCall({ channel: 'voice', outcome: 'hangup', spam: false })).toStrictEqual([]);
  });

  it.each(['answered', 'voicemail', 'hangup'] as const)('fires nothing for a spam call (%s)', (outcome) => {
    expect(eventsForCall({ channel: 'voice', outcome, spam: true })).toStrictEqual([]);
  });

  it.each([
    ['sms', 'answered'],
    ['sms', 'voicemail'],
    ['chat', 'answered'],
    ['chat', 'voicemail'],
  ] as const)('fires nothing for a %s conversation (%s)', (channel, outcome) => {
    expect(eventsForCall({ channel, outcome, spam: false })).toStrictEqual([]);
  });
});
