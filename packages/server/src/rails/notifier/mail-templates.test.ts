import { describe, expect, it } from 'vitest';
import { renderMail } from './mail-templates.ts';

describe('mail templates', () => {
  it('gives the words as text and as escaped HTML with links made clickable', () => {
    const mail = renderMail({
      channel: 'email',
      recipient: 'ada@example.com',
      subject: 'Refund from <Shop & Co>',
      body: 'Shop & Co proposes a refund. Decide here: https://pay.example.com/r/abc?x=1&y=2.\nIt expires on 2026-12-01.',
    });
    expect(mail.subject).toBe('Refund from <Shop & Co>');
    expect(mail.text).toBe(
      'Shop & Co proposes a refund. Decide here: https://pay.example.com/r/abc?x=1&y=2.\n\nIt expires on 2026-12-01.\n',
    );
    expect(mail.html).toContain('<title>Refund from &lt;Shop &amp; Co&gt;</title>');
    expect(mail.html).toContain(
      '<p>Shop &amp; Co proposes a refund. Decide here: <a href="https://pay.example.com/r/abc?x=1&amp;y=2">https://pay.example.com/r/abc?x=1&amp;y=2</a>.</p>',
    );
    expect(mail.html).toContain('<p>It expires on 2026-12-01.</p>');
  });

  it('never lets the words become markup', () => {
    const mail = renderMail({
      channel: 'email',
      recipient: 'x@example.com',
      subject: 's',
      body: '<script>alert(1)</script> "https://evil.example/"onmouseover="x"',
    });
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&lt;script&gt;');
    expect(mail.html).not.toMatch(/href="[^"]*"onmouseover/);
  });
});
