// The hosted topup page (what POST /issuing/v1/topups/fiat answers, and /hosted/issuing/topups/{token}):
// pay by card on the platform's acquiring, or by bank transfer with the unique reference.
import { SANDBOX_BANK, type Topup } from '../../issuing/topups/topups-service.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { escapeHtml, page } from '../html.ts';

export function topupPage(
  t: Topup,
  notice?: { text: string; isError: boolean; field?: string | undefined },
): string {
  const amount = `${formatAmountIn(t.amount, t.currency)} ${t.currency}`;
  const message = notice
    ? `<p id="notice" class="notice${notice.isError ? ' error' : ''}" role="${notice.isError ? 'alert' : 'status'}">${escapeHtml(notice.text)}</p>`
    : '';
  if (t.status !== 'pending') {
    const text =
      t.status === 'completed'
        ? `Your account was topped up with ${amount}${t.method === 'card' ? ' by card' : ''}.`
        : t.status === 'expired'
          ? 'This topup has expired.'
          : 'Your payment is being confirmed.';
    return page(
      'Top up your account',
      `<h1>Top up ${escapeHtml(amount)}</h1><p role="status">${escapeHtml(text)}</p>`,
    );
  }
  const rows = [
    ['Beneficiary', SANDBOX_BANK.beneficiary],
    ['IBAN', SANDBOX_BANK.iban],
    ['BIC', SANDBOX_BANK.bic],
    ['Amount', amount],
    ['Reference (required)', t.reference],
    ['Valid until', t.expiresAt.toISOString().slice(0, 10)],
  ]
    .map(
      ([k, v]) =>
        `<tr><th scope="row">${escapeHtml(k ?? '')}</th><td data-field="${escapeHtml((k ?? '').toLowerCase())}">${escapeHtml(v ?? '')}</td></tr>`,
    )
    .join('');
  const invalid = (name: string) =>
    notice?.field === name ? ' aria-invalid="true" aria-describedby="notice"' : '';
  const card = t.paymentUrl
    ? `<h2>Pay by card</h2>
<form method="post" action="${escapeHtml(t.paymentUrl)}">
<label for="cardHolderName">Name on card</label><input id="cardHolderName" name="cardHolderName" autocomplete="cc-name" required${invalid('cardHolderName')}>
<label for="cardNumber">Card number</label><input id="cardNumber" name="cardNumber" inputmode="numeric" autocomplete="cc-number" required${invalid('cardNumber')}>
<label for="cardExpiryDate">Expiry (MM/YY)</label><input id="cardExpiryDate" name="cardExpiryDate" placeholder="MM/YY" autocomplete="cc-exp" required${invalid('cardExpiryDate')}>
<label for="cardCvv">Security code</label><input id="cardCvv" name="cardCvv" inputmode="numeric" autocomplete="cc-csc" required${invalid('cardCvv')}>
<button type="submit">Pay ${escapeHtml(amount)}</button>
</form>`
    : '';
  return page(
    'Top up your account',
    `<h1>Top up ${escapeHtml(amount)}</h1>${message}${card}
<h2>Or pay by bank transfer</h2><p>Send a bank transfer with exactly this reference; your account is credited when it arrives.</p><table>${rows}</table><p data-topup-id="${escapeHtml(t.topupId)}">Topup ${escapeHtml(t.topupId)}</p>`,
  );
}
