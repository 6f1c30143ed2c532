/** Credits as the console shows them: exact decimals of wei digit strings (18 decimals), never through a float. */
import { formatScaled } from "../shared/format.ts"

export const credits = (wei: string | null | undefined): string => (wei === null || wei === undefined ? "no limit" : formatScaled(wei, 18, 6))
