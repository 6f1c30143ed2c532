/**
 * The price browser's figures: the catalog (list prices, as the vendors quote them) and the pricing list (prices as
 * billed, with the 5% routing markup, as exact wei), as the server embedded them in the page.
 */
import type { CatalogResponse, PriceComponent, PricingResponse } from "../../../domain/oracle/schemas.ts"
import { plainNumber, weiToUsd } from "../../shared/format.ts"

export type CatalogEntry = CatalogResponse["models"][number]
export type Component = typeof PriceComponent.Type
export type Billed = PricingResponse["models"][string]
export type BilledFigure = Billed["input"]

/** Billed USD per million, exactly, from the pricing list's wei at its peg. */
export const billedUsd = (figure: BilledFigure | null | undefined, pegUsd: number): string | undefined =>
  figure === null || figure === undefined ? undefined : weiToUsd(figure.weiPerMillion, pegUsd)

/** A listed price component as the API sends it: USD per million, else its ratio of the input price. */
export const listedComponent = (component: Component | null): string | undefined =>
  component === null
    ? undefined
    : component.usdPerMillion !== null
      ? plainNumber(component.usdPerMillion)
      : component.ratioOfInput !== null
        ? `${plainNumber(component.ratioOfInput)} × input`
        : undefined

/** A token count in words a reader can scan: `272,001`. */
export const tokens = (count: number) => count.toLocaleString("en")
