// Times as the providers' JSON gives them (RFC 3339 text).

/** The time a provider's field holds; undefined when the field is missing or not a time. */
export function parseTime(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
