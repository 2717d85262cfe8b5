// The app's only script: a Copy button copies the field it names. Everything else is
// plain HTML forms.
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
