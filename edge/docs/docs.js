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
})();
