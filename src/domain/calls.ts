import type { EventType } from './events.js';

export const CHANNELS = ['voice', 'sms', 'chat'] as const;
export const OUTCOMES = ['answered', 'voicemail', 'hangup'] as const;

export interface CallReport {
  channel: (typeof CHANNELS)[number];
  outcome: (typeof OUTCOMES)[number];
  spam: boolean;
}

/**
 * Which events a finished conversation fires. Only voice calls count; spam and immediate
 * hang-ups fire nothing; voicemail is both a conversation and a missed call.
 */
export function eventsForCall(call: CallReport): EventType[] {
  if (call.channel !== 'voice' || call.spam || call.outcome === 'hangup') return [];
  return call.outcome === 'voicemail' ? ['new_conversation', 'missed_call'] : ['new_conversation'];
}
