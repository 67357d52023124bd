/** A value, or a promise of it: what a store method returns. */
export type Awaitable<T> = T | Promise<T>;
