export const ModelsPage = () => (
  <section aria-labelledby="models">
    <h1 id="models">Models</h1>
  </section>
)
