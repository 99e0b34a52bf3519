/**
 * The X-Accel-Redirect target for a stored file when nginx serves the bytes (DRS_BYTES_OFFLOAD=
 * nginx): the internal prefix and the path relative to the storage root, each segment
 * percent-encoded so that nginx, which decodes the URI before mapping it to the alias, finds
 * exactly the file the provisioner checked. Segments that could move the path out of the
 * dataset (empty, `.`, `..`) are refused rather than encoded: nginx would normalise them.
 */
export function accelRedirectTarget(prefix: string, storagePath: string): string {
  const segments = storagePath.split('/');
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..' || segment.includes('\0')) {
      throw new Error(`Not a storage path that can be offloaded: ${JSON.stringify(storagePath)}`);
    }
  }
  const base = prefix.endsWith('/') ? prefix : `${prefix}/`;
  return base + segments.map((segment) => encodeURIComponent(segment)).join('/');
}
