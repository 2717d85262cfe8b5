// The app's only script. A Copy button copies the field it names. A workspace's page
// follows its turns live: on each event of its stream it draws the live part again
// from the server (one renderer for both), keeping what is being typed. Everything
// else is plain HTML forms, and the pages are whole without this script.
document.documentElement.classList.add("js"); // the pages' styles may tell the two apart
document.addEventListener("click", function (e) {
  var b = e.target.closest("button.copy");
  if (!b) return;
  var field = document.getElementById(b.dataset.copy);
  if (!field) return;
  field.select();
  navigator.clipboard.writeText(field.value).then(function () {
    b.textContent = "Copied";
  }, function () {
    b.textContent = "Select and copy";
  });
});

(function () {
  var live = document.getElementById("live");
  if (!live || !live.dataset.events || !window.EventSource) return;
  var types = ["tool_started", "tool_finished", "tool_denied", "text", "approval_requested",
    "approval_resolved", "turn_finished"];
  var pending = null, busy = false, again = false;
  function redraw() {
    pending = null;
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.pathname, { credentials: "same-origin" }).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (!html) return;
      var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("live");
      if (fresh) live.innerHTML = fresh.innerHTML;
    }).finally(function () {
      busy = false;
      if (again) { again = false; redraw(); }
    });
  }
  // EventSource resumes a dropped stream by itself, from the last event's id.
  var stream = new EventSource(live.dataset.events);
  types.forEach(function (t) {
    stream.addEventListener(t, function () {
      if (!pending) pending = setTimeout(redraw, 150);
    });
  });
})();
