/**
 * The media types of an Accept header (RFC 9110 §12.5.1) the client takes, most preferred
 * first: by q-value, then in the order given; q=0 (refused) left out.
 */
export function acceptedTypes(accept: string): string[] {
  return accept
    .split(',')
    .map((part, index) => {
      const [type, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { type: type.trim(), q: q === undefined ? 1 : Number(q.slice(2)) || 0, index };
    })
    .filter((w) => w.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((w) => w.type);
}
