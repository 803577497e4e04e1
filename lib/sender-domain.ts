import { domainToASCII } from 'node:url';

/** A DNS name in ASCII: dot-separated labels of letters, digits and inner hyphens. */
export const DOMAIN_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const ADDRESS = /^[^\s@<>()[\]",;:\\]+@([^\s@<>()[\]",;:\\]+)$/;

/**
 * The domain, in ASCII (`whānau.nz` as `xn--whnau-gwa.nz`), of a sender
 * written as a bare address (`noreply@example.com`) or as a mailbox with a
 * display name (`Kāinga Ōra 🏠 <noreply@example.com>`, RFC 5322 name-addr);
 * undefined when it is neither, or its domain is not a domain name.
 */
export function senderDomain(from: string): string | undefined {
  const text = from.trim();
  const open = text.lastIndexOf('<');
  const address = text.endsWith('>') && open >= 0 ? text.slice(open + 1, -1) : text;
  const domain = ADDRESS.exec(address)?.[1];
  const ascii = domain === undefined ? '' : domainToASCII(domain);
  return DOMAIN_NAME.test(ascii) ? ascii : undefined;
}
