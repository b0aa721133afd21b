/** The person's line when a review's reasons are not sent back because the run used its revision rounds; `again` is how to start a new run there. */
export function revisionLimitText(limit: number, again: string): string {
  return `Stopping after ${limit} revision rounds; run ${again} again with a sharper goal.`;
}
