/**
 * Every actor a host makes is told, as it is made, on one diagnostics channel. Nothing in qmd
 * listens: the tests do (test/support/run-bounds.ts), so that every run of a machine, whoever
 * made its host and however deep, is bounded (a machine that loops fails its test, naming the
 * loop, instead of hanging it). A listener attaches through the actor's system, so a host that
 * runs unobserved (no trace, no inspector: the handlers counted in the gate, §2.1) stays so.
 * With no listener a publish costs one check (`hasSubscribers`). docs/design.md §3.
 */
import { channel } from 'node:diagnostics_channel';
import type { AnyActorRef } from 'xstate';
import type { Clock } from './clock.js';

/** The channel's name; a listener subscribes with `diagnostics_channel.subscribe(HOSTED_ACTORS, …)`. */
export const HOSTED_ACTORS = 'qmd:hosted-actor';

/** What the channel carries: the root actor, not yet started, and the clock its delays run on. */
export interface HostedActor {
  actor: AnyActorRef;
  clock: Clock;
}

const hosted = channel(HOSTED_ACTORS);

/** Tells the channel's listeners of `actor`; call it once per root actor, before `start()`. */
export function announceHostedActor(actor: AnyActorRef, clock: Clock): void {
  if (hosted.hasSubscribers) hosted.publish({ actor, clock } satisfies HostedActor);
}
