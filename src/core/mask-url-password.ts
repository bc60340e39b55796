/** A URL fit for messages and logs: the password in its authority becomes `***` (store specs, Redis URLs). */
export function maskUrlPassword(url: string): string {
  // Up to the last `@` of the authority: a password may hold an unescaped `@`.
  return url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:@/]*):[^/?#]*@/, '$1:***@');
}
