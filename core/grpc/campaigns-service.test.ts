import { describe, expect, it } from 'vitest';
import { MALLOC_DEFAULTS } from '../../lib/malloc-env';
import { REPORT_BYTES } from './campaigns-service';

describe('the campaign report on the gRPC stream', () => {
  it('goes in messages whose every copy stays under the mmap threshold hermod start gives glibc, so none is a fresh mapping', () => {
    const threshold = Number(MALLOC_DEFAULTS.MALLOC_MMAP_THRESHOLD_);
    // The protobuf field's tag and length (at most 6 bytes), then grpc-js's 5-byte frame header.
    expect(REPORT_BYTES + 6 + 5).toBeLessThan(threshold);
  });
});
