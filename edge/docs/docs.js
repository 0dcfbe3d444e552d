// Renders the API description with Swagger UI. This is a file of its own
// rather than an inline script so that the page's Content-Security-Policy
// can refuse every inline script.
(function () {
  "use strict";
  var node = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: node.dataset.specUrl,
    domNode: node,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    // Lists every operation on load, so that the page shows the whole API.
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    // The public validator badge would send the document to
    // validator.swagger.io: nothing on this page leaves the node.
    validatorUrl: null,
    // A ?url= or ?configUrl= must not point the page at another document.
    queryConfigEnabled: false
  });
  // A node serving generated demo data says so above the description, as
  // its /health, its / page and the Rappel-Dataset header do: the page is
  // the same file on every node, so it asks.
  fetch("/health").then(function (r) { return r.ok ? r.json() : null; }).then(function (h) {
    if (!h || h.dataset_kind !== "synthetic") {
      return;
    }
    var p = document.createElement("p");
    p.id = "dataset-notice";
    p.setAttribute("role", "status");
    p.textContent = "This node serves generated demo data, not real recalls: its titles, products, barcodes and companies are made up. " +
      "Ce nœud sert des données de démonstration générées, pas de vrais rappels.";
    p.style.padding = "0.75em 1em";
    p.style.margin = "0";
    p.style.background = "#fff3cd";
    p.style.fontFamily = "sans-serif";
    document.body.insertBefore(p, node);
  }).catch(function () {});
})();
