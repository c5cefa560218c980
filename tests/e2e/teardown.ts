// Playwright's global teardown: run alone (`npx playwright test`), Playwright chose the run's
// folder and built the site there; it goes when the run ends.
import { endTestEnvironment } from "../test-environment.ts";

export default endTestEnvironment;
