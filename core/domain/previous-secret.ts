/**
 * How long, at most, a callback secret replaced by a rotation keeps signing
 * beside the new one: long enough for a receiver's deploy, short enough that
 * a leaked secret does not outlive its rotation by much (Stripe's roll allows
 * up to a week as well).
 */
export const MAX_PREVIOUS_SECRET_MS = 7 * 86_400_000;
