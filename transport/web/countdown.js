// Counts down to the deadline of the checkout, from the remaining seconds
// the server rendered (so the payer's clock does not matter), and loads the
// page again when time is up. Without it the server-rendered time stands
// and a <noscript> refresh renders it anew.
(function () {
  var el = document.getElementById("countdown");
  if (!el) return;
  var end = Date.now() + Number(el.getAttribute("data-remaining")) * 1000;
  var url = el.getAttribute("data-url");
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function tick() {
    var s = Math.max(0, Math.round((end - Date.now()) / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    el.textContent = (h ? h + ":" + pad(m) : m) + ":" + pad(s % 60);
    if (s === 0) {
      clearInterval(timer);
      setTimeout(function () { location.replace(url); }, 1000);
    }
  }
  var timer = setInterval(tick, 1000);
  tick();
})();
