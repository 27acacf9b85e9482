// CSV for reports and exports (ferry jobs report, ferry audit --csv): one place for the quoting and
// the formula neutralising.

/**
 * A CSV cell (RFC 4180: quoted when it holds a comma, a quote or a line break, quotes doubled). A text
 * that starts with = + - @ (or a tab or carriage return) is what a spreadsheet runs as a formula: it is
 * neutralised with a leading apostrophe (OWASP, "CSV injection"), so the cell reads as text.
 */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRow(cells: readonly (string | number | null | undefined)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
