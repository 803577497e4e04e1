import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHANNELS, parseChannels } from './channels';

describe('the channels a worker is asked to serve', () => {
  it('reads one channel, several separated by commas, and each only once', () => {
    expect(parseChannels('sms')).toEqual({ channels: ['sms'] });
    expect(parseChannels('email, wab,rcs,mms,email')).toEqual({ channels: ['email', 'wab', 'rcs', 'mms'] });
  });

  it('names the first name that is not a channel', () => {
    expect(parseChannels('email,whatsapp,fax')).toEqual({ unknown: 'whatsapp' });
    expect(parseChannels('')).toEqual({ unknown: '' });
    expect(parseChannels('sms,')).toEqual({ unknown: '' });
  });

  it('reads back any list of channels written out with commas', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom(...CHANNELS), { minLength: 1 }), (channels) => {
        expect(parseChannels(channels.join(','))).toEqual({ channels });
      }),
    );
  });
});
