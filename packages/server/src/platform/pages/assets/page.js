// What Tessera's hosted pages do in the browser, driven by data on the page: the pages carry no inline
// script (their Content-Security-Policy runs only same-origin files), so nothing injected can run.
(() => {
  // A form that goes on by itself (to the bank's 3-D Secure page, back to the shop, a check again),
  // after data-autosubmit milliseconds; its button does the same without JavaScript.
  for (const form of document.querySelectorAll('form[data-autosubmit]')) {
    setTimeout(() => form.submit(), Number(form.dataset.autosubmit) || 0);
  }

  // An embedded checkout tells the page that frames it (the message is JSON data, never code).
  const message = document.getElementById('tessera-parent-message');
  if (message && window.parent !== window) window.parent.postMessage(JSON.parse(message.textContent), '*');

  // The crypto pay page: the quote's countdown, then the offer to quote again.
  const countdown = document.getElementById('countdown');
  if (countdown) {
    let left = Number(countdown.dataset.seconds);
    const tick = () => {
      countdown.textContent = left > 0 ? `${left} s` : countdown.dataset.expired;
      if (left <= 0) document.getElementById('requote')?.removeAttribute('hidden');
      left -= 1;
    };
    tick();
    setInterval(tick, 1000);
  }

  // The crypto pay page reloads when its order changes (a payment seen, confirmed, expired).
  const watch = document.querySelector('[data-watch-stamp]');
  if (watch) {
    setInterval(async () => {
      try {
        const res = await fetch(`${location.pathname}/status`, { cache: 'no-store' });
        const now = await res.json();
        if (now.stamp !== watch.dataset.watchStamp) location.reload();
      } catch {}
    }, 1500);
  }
})();
