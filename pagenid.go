package rappel

// FirstPageNID is the first Health Canada notice whose detail is its recall
// page on recalls-rappels.canada.ca rather than a document of the old
// detail API: the API's newest notice is 76771 (public code that read it in
// 2026 finds it frozen at 2021-10-29), and the site has published every
// notice since on its pages only. The refresher tries a notice's page
// first from it on (feeds.DefaultPageFrom), and the generated corpus
// (bundle/synth) writes pages from it on.
const FirstPageNID = 76772
