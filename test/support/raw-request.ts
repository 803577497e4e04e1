import type http from 'node:http';
import https from 'node:https';
import { readReply, type Reply } from './https-client';

export interface OpenRequest {
  /** Sends more of the body now. */
  write(bytes: Buffer | string): void;
  /** Ends the body and resolves with the answer. */
  end(bytes?: Buffer | string): Promise<Reply>;
  /** The answer, should it come before the body ends. */
  reply: Promise<Reply>;
}

/**
 * A POST whose body is exact bytes (invalid UTF-8, a Latin-1 é) sent in the
 * pieces the test chooses, on its own connection; the answer arrives as
 * https-client's Reply.
 */
export function openPost(baseUrl: string, ca: string, path: string, headers: Record<string, string>): OpenRequest {
  let req!: http.ClientRequest;
  const reply = new Promise<Reply>((resolve, reject) => {
    req = https.request(new URL(path, baseUrl), { method: 'POST', ca, agent: false, headers: { 'transfer-encoding': 'chunked', ...headers } }, (res) =>
      readReply(res, resolve),
    );
    req.on('error', reject);
  });
  // A test that fails before ending the body leaves this to be cut off at shutdown: not a second failure.
  reply.catch(() => undefined);
  return {
    write: (bytes) => void req.write(bytes),
    end: (bytes) => {
      req.end(bytes);
      return reply;
    },
    reply,
  };
}

/** A POST of exactly these bytes. */
export function postBytes(baseUrl: string, ca: string, path: string, bytes: Buffer, headers: Record<string, string>): Promise<Reply> {
  return openPost(baseUrl, ca, path, headers).end(bytes);
}

export const basic = (user: string, pass: string): string => 'Basic ' + Buffer.from(`${user}:${pass}`).toString('base64');
