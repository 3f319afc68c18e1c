import { badRequest, type AppError } from '../errors/app-error.js';

/**
 * Busboy's errors for a body that is not well-formed multipart. They carry no code, only
 * these messages (@fastify/busboy 3: lib/types/multipart.js and deps/dicer/lib/Dicer.js),
 * so they are matched by text; anything else is left to the caller.
 */
const noBoundary = /^Multipart: Boundary not found$/;
const endedEarly = /^Unexpected end of multipart data$|^(Part|Preamble) terminated early due to unexpected end of multipart data$/;

/**
 * The client's mistake in the multipart framing as 400 bad_request with a message that says
 * what to fix, or undefined for an error that is not one (storage, our own AppErrors, a client
 * that went away). `sawPart`: whether any part was parsed, which tells "not multipart at all"
 * from "cut short".
 */
export function malformedMultipart(error: unknown, sawPart: boolean): AppError | undefined {
  const message = error instanceof Error ? error.message : '';
  if (noBoundary.test(message)) {
    return badRequest(
      'Content-Type multipart/form-data needs a boundary parameter (multipart/form-data; boundary=…) naming the delimiter of the parts; ' +
        'when the body is built by an HTTP client or FormData, let it set the Content-Type header itself',
    );
  }
  if (endedEarly.test(message)) {
    return badRequest(
      sawPart
        ? 'the multipart body ends before its closing boundary (--boundary--): the upload was cut short; send the whole body'
        : 'the request body is not a multipart/form-data body delimited by the boundary its Content-Type names: no complete part was found',
    );
  }
  return undefined;
}
