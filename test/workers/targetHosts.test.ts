import { describe, expect, it } from 'vitest';
import { pacerKeys } from '../../src/workers/redisPacer.js';
import { hostOf, remembered } from '../../src/workers/targetHosts.js';

// What the engine derives from a target URL on every delivery is computed once per URL, and
// remembered no further than its bound.
describe('remembered', () => {
  it('computes each input once, however often it is asked', () => {
    const computed: string[] = [];
    const upper = remembered((input) => (computed.push(input), input.toUpperCase()));
    expect([upper('a'), upper('b'), upper('a'), upper('a')]).toEqual(['A', 'B', 'A', 'A']);
    expect(computed).toEqual(['a', 'b']);
  });

  it('keeps no more than its bound: past it, what it knew is computed again', () => {
    const computed: string[] = [];
    const upper = remembered((input) => (computed.push(input), input.toUpperCase()), 2);
    for (const input of ['a', 'b', 'c', 'a', 'c']) upper(input);
    // 'c' found it full and started it afresh; 'a' was forgotten then, 'c' was not.
    expect(computed).toEqual(['a', 'b', 'c', 'a']);
  });

  it('remembers nothing for an input that throws', () => {
    let calls = 0;
    const parse = remembered((input) => (calls++, new URL(input).host));
    expect(() => parse('not a url')).toThrow();
    expect(() => parse('not a url')).toThrow();
    expect(calls).toBe(2);
  });
});

describe('target keys', () => {
  it('tells hosts by host and port', () => {
    expect(hostOf('https://hooks.example.com/a?x=1')).toBe('hooks.example.com');
    expect(hostOf('https://hooks.example.com:8443/a')).toBe('hooks.example.com:8443');
  });

  it("gives each target and each account's host budget a key of its own, the same every time", () => {
    const keys = pacerKeys('p');
    const targets = ['https://a.example/1', 'https://a.example/2', 'https://b.example/1'].map(keys.target);
    expect(new Set(targets).size).toBe(3);
    // A host's keys share one hash tag (one slot of a cluster); another host's have their own.
    const tagOf = (key: string) => key.slice(0, key.indexOf(':target:'));
    expect(tagOf(targets[1]!)).toBe(tagOf(targets[0]!));
    expect(tagOf(targets[2]!)).not.toBe(tagOf(targets[0]!));
    expect(keys.target('https://a.example/1')).toBe(targets[0]);
    expect(pacerKeys('p').target('https://a.example/1')).toBe(targets[0]);

    const budgets = [keys.budget('acme', 'https://a.example/1'), keys.budget('acme', 'https://a.example/2'), keys.budget('other', 'https://a.example/1')];
    expect(budgets[0]).toBe(budgets[1]); // one budget per (account, host)
    expect(budgets[2]).not.toBe(budgets[0]);
    expect(keys.budget('acme', 'https://b.example/1')).not.toBe(budgets[0]);
  });
});
