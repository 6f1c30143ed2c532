/**
 * The inference API document, published separately from the public one (SPEC "Versioning" 2).
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { AlwaysPossibleErrors } from "./shared.ts"
import { ChatGroup, EmbeddingsGroup, EstimateGroup, MessagesGroup, ModelsGroup, ResponsesGroup } from "./ExchangeApi.ts"
import { UsageGroup } from "./UsageApi.ts"

export class InferenceApi extends HttpApi.make("inference")
  .add(ChatGroup)
  .add(MessagesGroup)
  .add(ResponsesGroup)
  .add(EmbeddingsGroup)
  .add(ModelsGroup)
  .add(EstimateGroup)
  .add(UsageGroup)
  .addError(AlwaysPossibleErrors[0])
  .addError(AlwaysPossibleErrors[1])
  .annotate(OpenApi.Title, "Compute Exchange Inference API")
  .annotate(OpenApi.Version, "1.0")
  .annotate(
    OpenApi.Description,
    "Chat inference in three wire formats (chat completions, messages, responses) and embeddings over pooled provider capacity, billed from a credit balance."
  ) {}
