// The embedded checkout's loader, served as /sdk/0.0.9/xmoney.js (the path the real service's SDK puts in
// the page it builds). `new XMoneyPaymentForm({container, payload, checksum, publicKey, sessionToken,
// userId, elementsOptions: {appearance: {theme}}, options, onReady, onError, onPaymentComplete})` opens
// Tessera's own card page in an iframe inside `container` (posting the signed payload to it), so card
// data is typed into Tessera's page and never touches the merchant's. The frame reports back by
// postMessage: ready, complete (the result, encrypted as for backUrl) or error; only messages from this
// script's own origin and from its own frame are heard. A callback that throws is logged, not fatal.
export const EMBEDDED_FORM_SCRIPT = `(function () {
  'use strict';
  var script = document.currentScript;
  var origin = new URL(script ? script.src : '/', window.location.href).origin;
  var counter = 0;

  function call(fn, value) {
    if (typeof fn !== 'function') return;
    try {
      fn(value);
    } catch (err) {
      if (window.console) console.error('XMoneyPaymentForm callback failed', err);
    }
  }

  function present(value) {
    return value !== undefined && value !== null && value !== '' && value !== 'undefined' && value !== 'null';
  }

  function XMoneyPaymentForm(options) {
    if (!(this instanceof XMoneyPaymentForm)) return new XMoneyPaymentForm(options);
    options = options || {};
    var container =
      typeof options.container === 'string' ? document.getElementById(options.container) : options.container;
    if (!container) throw new Error('XMoneyPaymentForm: no element for container ' + options.container);
    var name = 'xmoney-payment-form-' + ++counter + '-' + Math.random().toString(36).slice(2);
    var iframe = document.createElement('iframe');
    iframe.name = name;
    iframe.title = 'Card payment';
    iframe.setAttribute('allow', 'payment');
    iframe.style.width = '100%';
    iframe.style.minHeight = '560px';
    iframe.style.border = '0';
    container.appendChild(iframe);

    var appearance = (options.elementsOptions && options.elementsOptions.appearance) || {};
    var fields = {
      jsonRequest: options.payload,
      checksum: options.checksum,
      publicKey: options.publicKey,
      sessionToken: options.sessionToken,
      userId: options.userId,
      theme: appearance.theme
    };
    var form = document.createElement('form');
    form.method = 'post';
    form.action = origin + '/checkout/embedded';
    form.target = name;
    form.style.display = 'none';
    Object.keys(fields).forEach(function (key) {
      if (!present(fields[key])) return;
      var input = document.createElement('input');
      input.type = 'hidden';
      input.name = key;
      input.value = String(fields[key]);
      form.appendChild(input);
    });
    document.body.appendChild(form);
    form.submit();
    document.body.removeChild(form);

    function onMessage(event) {
      if (event.origin !== origin || event.source !== iframe.contentWindow) return;
      var message = event.data || {};
      if (message.type === 'tessera-checkout:ready') call(options.onReady);
      else if (message.type === 'tessera-checkout:complete') call(options.onPaymentComplete, message.data);
      else if (message.type === 'tessera-checkout:error') call(options.onError, message.data);
    }
    window.addEventListener('message', onMessage);

    this.iframe = iframe;
    this.destroy = function () {
      window.removeEventListener('message', onMessage);
      if (iframe.parentNode) iframe.parentNode.removeChild(iframe);
    };
  }

  window.XMoneyPaymentForm = XMoneyPaymentForm;
})();
`;
