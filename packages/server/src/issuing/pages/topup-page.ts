// The hosted topup page (what POST /issuing/v1/topups/fiat answers, and /hosted/issuing/topups/{token}):
// pay by card on the platform's acquiring, or by bank transfer with the unique reference.

import { formatAmountIn } from '../../platform/money/amount.ts';
import { escapeHtml, page } from '../../platform/pages/html.ts';
import type { Lang } from '../../platform/pages/i18n.ts';
import { messagesFor } from '../../platform/pages/messages.ts';
import { SANDBOX_BANK, type Topup } from '../topups/topups-service.ts';

export function topupPage(
  t: Topup,
  notice?: { text: string; isError: boolean; field?: string | undefined },
  lang: Lang = 'en',
): string {
  const m = messagesFor(lang);
  const amount = `${formatAmountIn(t.amount, t.currency)} ${t.currency}`;
  const message = notice
    ? `<p id="notice" class="notice${notice.isError ? ' error' : ''}" role="${notice.isError ? 'alert' : 'status'}">${escapeHtml(notice.text)}</p>`
    : '';
  if (t.status !== 'pending') {
    const text =
      t.status === 'completed'
        ? m.toppedUp(amount, t.method === 'card')
        : t.status === 'expired'
          ? m.topupExpired
          : m.topupConfirming;
    return page(
      m.topUpTitle,
      `<h1>${escapeHtml(m.topUp(amount))}</h1><p role="status">${escapeHtml(text)}</p>`,
      undefined,
      lang,
    );
  }
  // Each row: its stable field name (for scripts and tests), its label in the page's language, its value.
  const rows = [
    ['beneficiary', m.beneficiary, SANDBOX_BANK.beneficiary],
    ['iban', 'IBAN', SANDBOX_BANK.iban],
    ['bic', 'BIC', SANDBOX_BANK.bic],
    ['amount', m.amount, amount],
    ['reference (required)', m.referenceRequired, t.reference],
    ['valid until', m.validUntil, t.expiresAt.toISOString().slice(0, 10)],
  ]
    .map(
      ([field, label, value]) =>
        `<tr><th scope="row">${escapeHtml(label ?? '')}</th><td data-field="${escapeHtml(field ?? '')}">${escapeHtml(value ?? '')}</td></tr>`,
    )
    .join('');
  const invalid = (name: string) =>
    notice?.field === name ? ' aria-invalid="true" aria-describedby="notice"' : '';
  const card = t.paymentUrl
    ? `<h2>${escapeHtml(m.payByCard)}</h2>
<form method="post" action="${escapeHtml(t.paymentUrl)}?lang=${lang}">
<label for="cardHolderName">${escapeHtml(m.nameOnCard)}</label><input id="cardHolderName" name="cardHolderName" autocomplete="cc-name" required${invalid('cardHolderName')}>
<label for="cardNumber">${escapeHtml(m.cardNumber)}</label><input id="cardNumber" name="cardNumber" inputmode="numeric" autocomplete="cc-number" required${invalid('cardNumber')}>
<label for="cardExpiryDate">${escapeHtml(m.expiry)}</label><input id="cardExpiryDate" name="cardExpiryDate" placeholder="${escapeHtml(m.expiryPlaceholder)}" autocomplete="cc-exp" required${invalid('cardExpiryDate')}>
<label for="cardCvv">${escapeHtml(m.securityCode)}</label><input id="cardCvv" name="cardCvv" inputmode="numeric" autocomplete="cc-csc" required${invalid('cardCvv')}>
<button type="submit">${escapeHtml(m.pay(amount))}</button>
</form>`
    : '';
  return page(
    m.topUpTitle,
    `<h1>${escapeHtml(m.topUp(amount))}</h1>${message}${card}
<h2>${escapeHtml(m.orBankTransfer)}</h2><p>${escapeHtml(m.bankTransferHint)}</p><div class="scroll" tabindex="0" role="region" aria-label="${escapeHtml(m.orBankTransfer)}"><table>${rows}</table></div><p data-topup-id="${escapeHtml(t.topupId)}">${escapeHtml(m.topupLabel(t.topupId))}</p>`,
    undefined,
    lang,
  );
}
