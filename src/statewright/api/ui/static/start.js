/* statewright web UI: draws the page once every script is loaded (each page's init function
   is in its view's file), and keeps the health of the jobs in the top bar fresh. */
"use strict";

{
  const PAGES = { dags: initDags, dag: initDag, run: initRun, task_instance: initTaskInstance };
  const init = PAGES[document.body.dataset.page];
  if (init) init();
}
refreshHealth();
setInterval(() => { if (!document.hidden) refreshHealth(); }, 15000);
