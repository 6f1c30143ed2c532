export const NotFoundPage = () => (
  <section aria-labelledby="nf">
    <h1 id="nf">No such page</h1>
    <p>
      See <a href="./">the index</a> or <a href="./models">the models</a>.
    </p>
  </section>
)
