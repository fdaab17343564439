/** Resolves true when `promise` settles within `ms` (fulfilled or rejected), false once `ms` passed; never rejects. */
export function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => (clearTimeout(timer), resolve(true)),
      () => (clearTimeout(timer), resolve(true)),
    );
  });
}
