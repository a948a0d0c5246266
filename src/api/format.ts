/** ISO 8601 in UTC, as every timestamp the API returns. */
export const toIso = (date: Date) => date.toISOString();

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Path ids are checked before storage sees them: a malformed id is simply not found. */
export const isUuid = (value: string) => UUID_SHAPE.test(value);
