/** Minimal XML text/attribute escaping for the JUnit reporter (XML 1.0 §2.2, §2.4). */

// Characters XML 1.0 does not allow at all (C0 controls other than TAB, LF, CR; U+FFFE/U+FFFF).
// eslint-disable-next-line no-control-regex
const INVALID = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

/** Escapes `s` for use in element content or a double-quoted attribute. */
export function xmlEscape(s: string): string {
  return s.replace(INVALID, "\ufffd").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}
