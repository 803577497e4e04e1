import { describe, expect, it } from 'vitest';
import { checkCallbackUrlSyntax, isPrivateAddress, resolveCallbackTarget } from './callback-url';
import { signature } from './callback-sender';
import { createHmac } from 'node:crypto';

describe('callback URLs', () => {
  it('refuses credentials whose percent-encoding is broken, which no request could carry, and takes well-formed ones in any script', () => {
    for (const text of [
      'https://acme:p%ZZ@hooks.example.com/hermod',
      'https://ac%E0%A4me:secret@hooks.example.com/x',
      'https://acme:100%@hooks.example.com/x',
    ]) {
      expect(() => checkCallbackUrlSyntax(text), text).toThrow(
        expect.objectContaining({ code: 'invalid_attrib', message: expect.stringContaining('percent-encoding') }),
      );
    }
    const ok = checkCallbackUrlSyntax('https://k%C4%81inga:hu%CC%84na%20pa%3Aho@hooks.example.com/hermod');
    expect(decodeURIComponent(ok.password)).toBe('hu\u0304na pa:ho');
  });

  it('treats loopback, private, link-local and unique-local addresses as private', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
    ])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['8.8.8.8', '172.32.0.1', '93.184.216.34', '2606:4700::1111']) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('refuses a URL that points at a private address unless that is allowed for development', async () => {
    await expect(resolveCallbackTarget(new URL('http://127.0.0.1:9/x'), false)).rejects.toMatchObject({ code: 'forbidden', retryable: false });
    await expect(resolveCallbackTarget(new URL('http://localhost:9/x'), false)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(resolveCallbackTarget(new URL('http://[::1]:9/x'), false)).rejects.toMatchObject({ code: 'forbidden' });
    // WHATWG URL writes these as [::ffff:7f00:1]: loopback still.
    for (const url of ['http://[::ffff:127.0.0.1]:9/x', 'http://[0:0:0:0:0:ffff:127.0.0.1]:9/x', 'http://[::ffff:169.254.169.254]/latest/meta-data'])
      await expect(resolveCallbackTarget(new URL(url), false), url).rejects.toMatchObject({ code: 'forbidden' });
    // A name whose AAAA answer is such an address is refused too.
    await expect(resolveCallbackTarget(new URL('https://hooks.example.com/x'), false, async () => ['::ffff:a00:1'])).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect(await resolveCallbackTarget(new URL('http://127.0.0.1:9/x'), true)).toEqual(['127.0.0.1']);
  });

  it('takes a name under .localhost as this machine, as RFC 6761 and browsers do, whatever the system resolver says (callbacks trial: it never resolved)', async () => {
    for (const host of ['hooks.localhost', 'kōrero.acme.localhost', 'HOOKS.LOCALHOST.']) {
      const url = new URL(`http://${host}:9/x`);
      expect((await resolveCallbackTarget(url, true)).sort(), host).toEqual(['127.0.0.1', '::1']);
      await expect(resolveCallbackTarget(url, false), host).rejects.toMatchObject({ code: 'forbidden' });
    }
  });

  it('accepts only absolute http and https URLs', () => {
    expect(checkCallbackUrlSyntax('https://user:pw@example.com/cb').username).toBe('user');
    expect(() => checkCallbackUrlSyntax('ftp://example.com/')).toThrow(/http or https/);
    expect(() => checkCallbackUrlSyntax('/relative')).toThrow(/not a URL/);
    expect(() => checkCallbackUrlSyntax('http://localhost:0/tūnga')).toThrow(/has port 0/);
    expect(checkCallbackUrlSyntax('https://hooks.example.com:8443/tūnga').port).toBe('8443');
  });

  it('refuses a URL without a host after its two slashes, which the URL standard would read as naming its path as the host (trial: http:///nohost became http://nohost/)', () => {
    for (const text of [
      'http:///nohost',
      'https:////hooks.example.com/cb',
      'http:hooks.example.com/cb',
      'https:/hooks.example.com',
      'http:\\\\hooks.example.com',
      'https://\\hooks.example.com',
    ])
      expect(() => checkCallbackUrlSyntax(text), text).toThrow(/has no host: write it as https:\/\/host\/path/);
    expect(checkCallbackUrlSyntax('HTTPS://Hooks.Example.com/tūnga').hostname).toBe('hooks.example.com');
    expect(checkCallbackUrlSyntax('http://[::1]:8080/cb').hostname).toBe('[::1]');
  });

  it('signs the timestamp and body with HMAC-SHA256 as the README tells receivers to check', () => {
    const body = '{"id":"x","status":"sent"}';
    const expected = createHmac('sha256', 'secret').update(`1700000000.${body}`).digest('hex');
    expect(signature('secret', 1_700_000_000, body)).toBe(`t=1700000000,v1=${expected}`);
  });
});
