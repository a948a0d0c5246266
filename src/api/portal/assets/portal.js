// Shows each <time datetime> in the browser's own time zone; the page reads in UTC without it.
'use strict';
const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
for (const element of document.querySelectorAll('time[datetime]')) {
  const at = new Date(element.getAttribute('datetime'));
  if (Number.isNaN(at.getTime())) continue;
  element.title = element.textContent;
  element.textContent = format.format(at);
}
