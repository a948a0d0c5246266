/**
 * "New events are in the outbox": how a producer (the web process, a use case) tells the
 * fan-out to look now rather than at its next poll. Only a hint: the events are committed
 * already, and the fan-out polls the outbox every second anyway, so a lost ring costs at most
 * that second.
 */
export interface NewEventsSignal {
  notify(): void;
  /** Throws when the signal's backing service does not answer (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The embedded process's: a direct call. */
export function createLocalNewEvents(): NewEventsSignal & { listen(listener: () => void): void } {
  const listeners: (() => void)[] = [];
  return {
    notify: () => listeners.forEach((listener) => listener()),
    listen: (listener) => void listeners.push(listener),
    ping: async () => {},
    close: async () => {},
  };
}
