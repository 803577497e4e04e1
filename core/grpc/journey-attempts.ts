/**
 * The hand-overs to a carrier in a message's events, for the operator's
 * journey: each `submitted` event's carrier id is one (a failover to another
 * carrier is a second). A receipt names the carrier id of whichever part it is
 * for and may come before its submit was recorded: one with a carrier id no
 * `submitted` event has belongs to the latest hand-over so far, or the first.
 * Without any `submitted` event (older data), each carrier id is one.
 * `attemptOf[i]` is the hand-over event i belongs to, 0 before the first.
 */
export function journeyAttempts(events: readonly { status: string; carrierId: string }[]): { attempts: number; attemptOf: number[] } {
  const handOvers: string[] = [];
  for (const e of events) if (e.status === 'submitted' && e.carrierId && !handOvers.includes(e.carrierId)) handOvers.push(e.carrierId);
  if (handOvers.length === 0) for (const e of events) if (e.carrierId && !handOvers.includes(e.carrierId)) handOvers.push(e.carrierId);
  let latest = 0;
  const attemptOf = events.map((e) => {
    if (!e.carrierId) return latest;
    const known = handOvers.indexOf(e.carrierId) + 1;
    latest = Math.max(latest, known || 1);
    return known || latest;
  });
  return { attempts: handOvers.length, attemptOf };
}
