/** A stream's state as far as output-lines knows it: one listener per stream, however often it is asked for. */
const streams = new WeakMap<NodeJS.WritableStream, { closed: boolean }>();

/**
 * Writes a command's lines to standard output (or error). A reader that stops
 * early (`hermod campaigns list | head -3`) closes the pipe, and the next
 * write fails with EPIPE, which Node emits as an 'error' event: unheard, it
 * ended the CLI with a stack trace. As Unix tools do, what is left is dropped
 * quietly, and the command ends as it would have, with its own exit code.
 */
export function outputLines(stream: NodeJS.WritableStream): (line: string) => void {
  const state = streams.get(stream) ?? watch(stream);
  return (line) => {
    if (!state.closed) stream.write(`${line}\n`);
  };
}

function watch(stream: NodeJS.WritableStream): { closed: boolean } {
  const state = { closed: false };
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    state.closed = true;
  });
  streams.set(stream, state);
  return state;
}
