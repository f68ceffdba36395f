// Minimal, safe HTML for hosted pages: every interpolated value is escaped.
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 34rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
  fieldset { border: 1px solid #bbb; border-radius: 6px; margin: 1rem 0; }
  label { display: block; margin: .5rem 0; }
  button { font-size: 1rem; padding: .6rem 1.2rem; }
  .notice { padding: .8rem; border-radius: 6px; background: #eef5ff; }
  .error { background: #fdecea; }
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}
