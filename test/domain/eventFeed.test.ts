import { describe, expect, it } from 'vitest';
import { BEFORE_ANY_ID, encodeFeedCursor, eventFeedQuery, laterPosition } from '../../src/domain/eventFeed.js';

const ID = '0b6f8e2a-9c4d-4f1e-8a7b-5d3c2e1f0a9b';
const NOW = new Date('2026-12-06T12:00:00Z');

describe('the events feed’s rules', () => {
  it('reads back the cursor it writes, with the defaults of each form', () => {
    const position = { tx: '18446744073709551615', id: ID, at: new Date('2026-12-01T00:00:00Z') };
    expect(eventFeedQuery({ event: 'new_contact', after: encodeFeedCursor(position) }, NOW, 30)).toStrictEqual({
      event: 'new_contact',
      after: position,
      limit: 100,
    });
    expect(eventFeedQuery({ event: 'missed_call' }, NOW, 30)).toStrictEqual({ event: 'missed_call', after: undefined, limit: 3 });
  });

  it('expires a cursor from before retention’s cutoff, and not one after it', () => {
    const cursorAt = (at: Date) => encodeFeedCursor({ tx: '7', id: ID, at });
    const justInside = new Date(NOW.getTime() - 0.5 * 86_400_000 + 1);
    expect(eventFeedQuery({ event: 'new_contact', after: cursorAt(justInside) }, NOW, 0.5).after?.at).toStrictEqual(justInside);
    expect(() => eventFeedQuery({ event: 'new_contact', after: cursorAt(new Date(NOW.getTime() - 0.5 * 86_400_000 - 1)) }, NOW, 0.5)).toThrow('cursor_expired');
  });

  it('orders positions by transaction id as a number, then by event id', () => {
    const at = NOW;
    const nine = { tx: '9', id: ID, at };
    const ten = { tx: '10', id: BEFORE_ANY_ID, at };
    expect(laterPosition(nine, ten)).toBe(ten);
    expect(laterPosition(ten, nine)).toBe(ten);
    const sameTxLaterId = { tx: '10', id: ID, at };
    expect(laterPosition(ten, sameTxLaterId)).toBe(sameTxLaterId);
  });
});
