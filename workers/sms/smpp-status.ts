/** The SMPP command_status an error from a submit or a query came with, if any (statusError puts it in the cause). */
export function smppStatusOf(err: unknown): number | undefined {
  const cause = (err as { cause?: { status?: unknown } })?.cause;
  return typeof cause?.status === 'number' ? cause.status : undefined;
}
