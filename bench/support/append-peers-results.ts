import fs from 'node:fs';

const HEADING = '## Peers: Kannel and hermod in one run';

const INTRO = `Written by \`npm run bench:peers\` (bench/peers.ts), one dated subsection
per run: Debian's Kannel (bearerbox + smsbox + fakesmsc) \`sendsms\`, a bare
\`node:https\` server with hermod's certificate answering hermod's 202 body
(the TLS ceiling in Node here), and hermod's v2 and v1 send, all driven by the
same wrk with the same connections and duration in one run. "accepted" counts
2xx answers of the warm-up and the measured run; "reached SMSC" counts what
fakesmsc (its own summary) and hermod's SMSC simulator (submit_sm per
destination) received after the drain. A few more may reach the SMSC than
were counted as accepted: requests in flight when wrk stopped.`;

/**
 * Appends `subsection` to the peers section of RESULTS.md (the end of the
 * section, before the next \`## \` heading), creating the section at the end
 * of the file when it is not there yet. Touches nothing else in the file.
 */
export function appendPeersResults(file: string, subsection: string): void {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const block = `${subsection.trim()}\n`;
  const at = text.indexOf(`\n${HEADING}\n`);
  if (at < 0) {
    fs.writeFileSync(file, `${text.replace(/\n*$/, '')}\n\n${HEADING}\n\n${INTRO}\n\n${block}`);
    return;
  }
  const next = text.indexOf('\n## ', at + HEADING.length + 1);
  const end = next < 0 ? text.length : next + 1;
  const before = text.slice(0, end).replace(/\n*$/, '');
  fs.writeFileSync(file, `${before}\n\n${block}${next < 0 ? '' : `\n${text.slice(end)}`}`);
}
