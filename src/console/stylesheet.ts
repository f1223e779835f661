/** The console's one stylesheet, served from its own origin (the CSP allows no inline style and no other host). */
export const STYLESHEET = `*{box-sizing:border-box}
body{font:16px/1.5 system-ui,sans-serif;background:#f4f6f8;color:#1b2733;margin:0}
a{color:#0b57c2}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem}.skip:focus{left:.5rem;z-index:2}
header{background:#17324d;color:#fff;display:flex;flex-wrap:wrap;align-items:center;gap:1rem;padding:.6rem 1.2rem}
header .agency{font-weight:700;margin:0}header nav ul{display:flex;flex-wrap:wrap;gap:.2rem 1rem;list-style:none;margin:0;padding:0}
header nav a{color:#fff;text-decoration:none;padding:.2rem .1rem}header nav a[aria-current]{border-bottom:3px solid #f0a500}
header nav a:hover{text-decoration:underline}header .who{margin:0 0 0 auto;display:flex;align-items:center;gap:.6rem}
main{max-width:72rem;margin:1.5rem auto;background:#fff;border-radius:8px;padding:1.5rem 2rem;box-shadow:0 1px 4px #0002}
body.narrow main{max-width:28rem;margin-top:4rem}main:focus{outline:none}
h1{font-size:1.5rem;margin-top:0}h2{font-size:1.2rem;margin-top:2rem}
label{display:block;margin:.8rem 0 .2rem;font-weight:600}fieldset{border:1px solid #c9d1d9;border-radius:4px;margin:1rem 0}
fieldset label{display:inline-block;font-weight:400;margin:.2rem 1rem .2rem 0}legend{font-weight:600}
input,select,textarea{padding:.5rem;border:1px solid #6b7a88;border-radius:4px;font:inherit;max-width:100%}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=number],input[type=datetime-local],textarea,select{width:100%}
input[type=checkbox],input[type=radio],td select{width:auto}input[type=file]{display:block}
form.filter{display:flex;flex-wrap:wrap;align-items:center;gap:.6rem}form.filter label{margin:0}form.filter select{width:auto}
button{padding:.5rem 1rem;border:0;border-radius:4px;font:inherit;cursor:pointer;background:#1f5fbf;color:#fff}
button.secondary{background:#e4e8ec;color:#1b2733}button.danger{background:#a4161a}
form.inline{display:inline}form.stack button{margin-top:1rem}
table{border-collapse:collapse;width:100%;margin:1rem 0;font-size:.95rem}caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #dde3e9;vertical-align:top}th{background:#eef2f6}
td.number,th.number{text-align:right;font-variant-numeric:tabular-nums}
.notice{padding:.7rem 1rem;border-radius:4px;font-weight:600}.notice.done{background:#e3f4e8;color:#14532d}
.notice{white-space:pre-line}.notice.refused,.error{background:#fde8e8;color:#8a1c1c}.muted{color:#4d5a66;font-size:.9rem}
.secret{font-family:ui-monospace,monospace;background:#fff7d6;padding:.6rem;border:1px solid #d4a72c;word-break:break-all}
code,pre{font-family:ui-monospace,monospace;font-size:.9rem}pre{background:#f1f4f7;padding:.8rem;overflow:auto}
.chart svg{max-width:100%;height:auto}.chart .bar{fill:#1f5fbf}.chart .bar.bad{fill:#b42318}.chart .axis{stroke:#6b7a88}
.chart text{fill:#1b2733;font-size:12px}dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}
dl.facts dt{font-weight:600}dl.facts dd{margin:0}ol.attempts{margin:0;padding-left:1.2rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;
