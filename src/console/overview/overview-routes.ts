import { render, viewerOf, type ConsoleSection } from '../console-context.js';
import { mayIn } from '../console-roles.js';
import { html } from '../html.js';
import { CONSOLE_PATH } from '../layout.js';
import { orderAgingPicture } from './order-aging.js';

/** What each role may do, as the overview tells the person. */
function roleSummary(role: Parameters<typeof mayIn>[0]) {
  if (mayIn(role, 'administer'))
    return 'You administer this agency: integrations, webhook subscriptions, imports, and the proposals of assistants.';
  if (mayIn(role, 'decide')) return 'You decide the proposals of assistants, and can read every page.';
  return 'You can read every page; changes are made by the agency’s administrators.';
}

export const overviewSection: ConsoleSection = {
  nav: { path: `${CONSOLE_PATH}/`, label: 'Overview', capability: 'read' },
  register(scope, ctx) {
    scope.get('/', async (request, reply) => {
      const { person } = viewerOf(request);
      return render(
        request,
        reply,
        'Overview',
        html`<dl class="facts"><dt>Signed in as</dt><dd>${person.name} (${person.email})</dd><dt>Role</dt><dd>${person.role}</dd></dl>
<p>${roleSummary(person.role)}</p>
${await orderAgingPicture(ctx, person)}`,
      );
    });
  },
};
