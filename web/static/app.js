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
    "approval_resolved", "turn_finished", "setup_output", "setup_finished"];
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

// Files: a form with files picked uploads them one request each, then sends the
// message naming them (api.md's order: a start with files creates the workspace, the
// files follow, then the prompt). Each request carries a key derived from the form's,
// so a retry of the whole thing repeats nothing.
document.addEventListener("submit", function (e) {
  var form = e.target;
  var picker = form.dataset && form.dataset.files ? form.querySelector('input[type="file"]') : null;
  if (!picker || !picker.files.length) return;
  e.preventDefault();
  var status = form.querySelector(".upload-status");
  var say = function (text) { if (status) status.textContent = text; };
  var data = new FormData(form);
  var csrf = data.get("csrf"), key = data.get("key");
  var post = function (url, fields) {
    return fetch(url, { method: "POST", credentials: "same-origin", body: new URLSearchParams(fields) });
  };
  var workspace;
  var start = Promise.resolve(form.dataset.workspace);
  var text;
  if (form.dataset.files === "start") {
    text = data.get("prompt");
    data.set("prompt", ""); // the prompt goes with the files, after them
    start = post(form.action, data).then(function (r) {
      var m = r.ok && new URL(r.url).pathname.match(/^\/app\/workspaces\/(ws_[0-9A-Za-z]+)$/);
      if (!m) throw new Error("the workspace was not started");
      return m[1];
    });
  } else {
    text = data.get("text");
  }
  say("Uploading…");
  start.then(function (id) {
    workspace = id;
    var ids = [];
    return Array.from(picker.files).reduce(function (done, file, i) {
      return done.then(function () {
        say("Uploading " + file.name + "…");
        return fetch("/app/uploads/" + id, { method: "POST", credentials: "same-origin", body: file,
          headers: { "Content-Type": file.type || "application/octet-stream", "X-File-Name": encodeURIComponent(file.name),
            "X-CSRF-Token": csrf, "Idempotency-Key": key + ":file:" + i } }).then(function (r) {
          return r.json().then(function (b) {
            if (!r.ok) throw new Error(file.name + ": " + b.error);
            ids.push(b.id);
          });
        });
      });
    }, Promise.resolve()).then(function () { return ids; });
  }).then(function (ids) {
    var fields = new URLSearchParams({ csrf: csrf, key: key + ":send", text: text || "" });
    ids.forEach(function (id) { fields.append("attachments", id); });
    return fetch("/app/workspaces/" + workspace + "/messages", { method: "POST", credentials: "same-origin", body: fields });
  }).then(function (r) {
    location.assign(r.url);
  }).catch(function (err) {
    say(err.message + (workspace && form.dataset.files === "start" ?
      " The workspace " + workspace + " was started without them; send them from its page." : ""));
  });
});

// Times: the pages write them in UTC (<time datetime>), which stays without this
// script; here they read in the reader's time zone and in words ("3 min ago"), the
// exact UTC time kept on hover, and a running turn's elapsed time ticks.
(function () {
  function ago(ms) {
    var past = ms >= 0, s = Math.round(Math.abs(ms) / 1000), words;
    if (s < 45) return past ? "just now" : "in a moment";
    if (s < 3600) words = Math.round(s / 60) + " min";
    else if (s < 86400) words = Math.round(s / 3600) + " h";
    else return null;
    return past ? words + " ago" : "in " + words;
  }
  function elapsed(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    return s < 60 ? s + " s" : Math.floor(s / 60) + " min " + (s % 60) + " s";
  }
  function draw() {
    var now = Date.now();
    document.querySelectorAll("time[datetime]").forEach(function (t) {
      var at = Date.parse(t.getAttribute("datetime"));
      if (isNaN(at)) return;
      if (t.classList.contains("elapsed")) { t.textContent = elapsed(now - at); return; }
      var local = new Date(at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
      t.textContent = ago(now - at) || local;
      if (t.title.indexOf(local) < 0) t.title = local + " · " + t.title;
    });
  }
  draw();
  setInterval(draw, 1000);
  // The live part is drawn again from the server: its times are UTC until the next tick.
  var live = document.getElementById("live");
  if (live && window.MutationObserver) new MutationObserver(draw).observe(live, { childList: true });
})();
