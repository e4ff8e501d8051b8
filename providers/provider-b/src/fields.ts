import busboy from 'busboy';
import { header, InboundRequest, isObject, jsonBody, jsonText, malformed, mediaType } from '@switchboard/provider-kit';

export type Fields = Record<string, string>;

/** Multipart form fields (files, such as bounced mail attached to the event, are skipped), with busboy. */
function multipartFields(request: InboundRequest): Promise<Fields> {
  return new Promise((resolve, reject) => {
    const fields: Fields = {};
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': header(request, 'content-type') } });
    } catch {
      return reject(malformed('The multipart body has no boundary'));
    }
    parser.on('field', (name, value) => (fields[name] = value));
    // A body cut off inside a file part errs on that part's stream too: unheard, it ended the process.
    parser.on('file', (_name, stream) => stream.on('error', () => undefined).resume());
    parser.on('error', () => reject(malformed('The multipart body cannot be read')));
    parser.on('close', () => resolve(fields));
    parser.end(request.rawBody);
  });
}

/**
 * A legacy Mailgun request's fields, however it was encoded: urlencoded (the default), multipart (events
 * that can carry the bounced mail) or a JSON object.
 */
export async function fieldsOf(request: InboundRequest): Promise<Fields> {
  const type = mediaType(request);
  if (type === 'multipart/form-data') return multipartFields(request);
  if (type === 'application/json') {
    const body = jsonBody(request);
    if (!isObject(body)) throw malformed('Expected a JSON object of fields');
    return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? v : jsonText(v)]));
  }
  return Object.fromEntries(new URLSearchParams(request.rawBody.toString('utf8')));
}
