import { replyAddressKey } from './reply-address';

/** The application that claimed an address (a replyAddressKey), if any: accounts.ownerOfAddress. */
export type OwnerOfAddress = (addressKey: string) => Promise<string | undefined>;

/**
 * Why an application may not send from these addresses (`source`, `mask`),
 * or undefined when it may: an address an operator claimed for another
 * application (`hermod apps set-sources`) is that application's own, and
 * replies to it are routed to that application. A message sent from it by
 * another would have its customers' replies, STOP included, go to the
 * claimant. Addresses nobody claimed are open to every application.
 */
export async function claimedByAnother(
  ownerOf: OwnerOfAddress,
  applicationId: string,
  addresses: readonly { field: string; address: string }[],
): Promise<string | undefined> {
  for (const { field, address } of addresses) {
    if (!address) continue;
    const owner = await ownerOf(replyAddressKey(address));
    if (owner !== undefined && owner !== applicationId)
      return `${field} ${address} is claimed by another application, which its replies go to: send from this application's own addresses or from an unclaimed one`;
  }
  return undefined;
}
