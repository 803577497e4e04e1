import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { GrpcStatusCode } from './grpc-status-codes';

describe('gRPC status codes', () => {
  it('are the numbers @grpc/grpc-js sends, every one of them', () => {
    const library = Object.fromEntries(Object.entries(status).filter(([name]) => Number.isNaN(Number(name))));
    expect(GrpcStatusCode).toEqual(library);
  });
});
