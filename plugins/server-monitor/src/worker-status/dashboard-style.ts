/**
 * The dashboard's stylesheet, served from its own route: the engine's content security policy allows
 * same-origin stylesheets and no inline style. States read by colour and by word, on a phone first.
 */
export const DASHBOARD_CSS = `
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 60rem;
  padding: 0.75rem; color: #1f2328; line-height: 1.4; }
h1 { font-size: 1.5rem; margin: 0; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
header { border-radius: 0.5rem; padding: 0.75rem 1rem; }
.all-up { background: #ecfdf3; border-left: 0.5rem solid #067647; }
.problems { background: #fef3f2; border-left: 0.5rem solid #b42318; }
.word { font-weight: 700; letter-spacing: 0.03em; padding: 0 0.3rem; border-radius: 0.25rem; }
.down .word, .word.down, .status-critical { color: #fff; background: #b42318; }
.warn .word, .word.warn, .status-warning { color: #1f2328; background: #fdb022; }
.word.up, .status-healthy { color: #fff; background: #067647; }
.word.paused, .word.pending { color: #1f2328; background: #e4e7ec; }
ol.problems-list { list-style: none; padding: 0; margin: 0; }
ol.problems-list li { border: 1px solid #e4e7ec; border-left: 0.35rem solid #b42318; border-radius: 0.4rem;
  padding: 0.5rem 0.75rem; margin: 0 0 0.5rem; overflow-wrap: anywhere; }
ol.problems-list li.warn { border-left-color: #fdb022; }
.meta { color: #475467; font-size: 0.9rem; }
.error { font-family: ui-monospace, monospace; font-size: 0.85rem; color: #b42318; }
table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
th, td { text-align: left; padding: 0.35rem 0.4rem; border-bottom: 1px solid #e4e7ec; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.n.down-count { color: #b42318; font-weight: 700; }
.none { color: #067647; }
svg#sla-chart { display: block; width: 100%; max-width: 40rem; height: auto; }
`;
