// A corpus of raw answers as vision models give them (llava, llama3.2-vision, qwen2.5-vl, qwen3-vl,
// gemma3, minicpm-v, moondream, pixtral, DeepSeek, phi-3 vision), with what `cleanAltText` must
// make of them: the description alone, whole. `model` names the model (or template) whose habits
// the entry copies; `hard` marks a hard negative, a description that only looks like a wrapper and
// must come out unchanged (apart from the closing full stop).

export type RawAnswer = { language: string; model: string; raw: string; expected: string; hard?: true }

export const RAW_ANSWERS: RawAnswer[] = [
  // --- English ----------------------------------------------------------------------------------
  {
    language: 'en',
    model: 'llava',
    raw: ' The image features a brown dog running along a sandy beach near the water.',
    expected: 'A brown dog running along a sandy beach near the water.',
  },
  {
    language: 'en',
    model: 'llava 1.5 (prompt echoed)',
    raw: 'USER: <image>\nWrite alt text for this image.\nASSISTANT: A red double-decker bus on a rainy London street.',
    expected: 'A red double-decker bus on a rainy London street.',
  },
  {
    language: 'en',
    model: 'llama3.2-vision',
    raw: 'Here is a concise alt text for the image:\n\n"A red double-decker bus driving down a rainy street in London."<|eot_id|>',
    expected: 'A red double-decker bus driving down a rainy street in London.',
  },
  {
    language: 'en',
    model: 'llama3.2-vision (header tokens)',
    raw: '<|start_header_id|>assistant<|end_header_id|>\n\nThis image shows a wooden rowing boat tied to a jetty on a calm lake.<|eot_id|>',
    expected: 'A wooden rowing boat tied to a jetty on a calm lake.',
  },
  {
    language: 'en',
    model: 'gemma3',
    raw: "Here's an alt text for the image:\n\n**Alt Text:** A fluffy ginger cat sleeping curled up on a blue knitted blanket.\n\n**Explanation of choices:**\n\n*   **Key details:** mentions the cat's colour and pose.\n*   **Concise:** stays under 125 characters.<end_of_turn>",
    expected: 'A fluffy ginger cat sleeping curled up on a blue knitted blanket.',
  },
  {
    language: 'en',
    model: 'gemma3 (ran on into the next turn)',
    raw: 'A vintage red telephone box on a village green.<end_of_turn>\n<start_of_turn>user\nThanks!<end_of_turn>',
    expected: 'A vintage red telephone box on a village green.',
  },
  {
    language: 'en',
    model: 'qwen2.5-vl',
    raw: 'The image shows a woman in a yellow raincoat holding an umbrella at a crosswalk.<|im_end|>',
    expected: 'A woman in a yellow raincoat holding an umbrella at a crosswalk.',
  },
  {
    language: 'en',
    model: 'qwen2.5-vl (ChatML, ran on)',
    raw: '<|im_start|>assistant\nA plate of pancakes topped with blueberries and maple syrup.<|im_end|>\n<|im_start|>user\nMake it shorter<|im_end|>',
    expected: 'A plate of pancakes topped with blueberries and maple syrup.',
  },
  {
    language: 'en',
    model: 'qwen3-vl (think block)',
    raw: '<think>\nThe user wants alt text. There is a lighthouse on a cliff, waves, dark clouds.\n</think>\n\nA white lighthouse on a rocky cliff under a stormy sky.',
    expected: 'A white lighthouse on a rocky cliff under a stormy sky.',
  },
  {
    language: 'en',
    model: 'qwen3-vl (untagged reasoning)',
    raw: "Okay, let me look at this image. There's a bicycle leaning against a brick wall. I should keep it short.\n\n**Final answer:** A blue bicycle leaning against a red brick wall.",
    expected: 'A blue bicycle leaning against a red brick wall.',
  },
  {
    language: 'en',
    model: 'qwen3-vl (Ollama CLI transcript)',
    raw: 'Thinking...\nThe user wants a short description of a bird.\n...done thinking.\n\nA snowy owl perched on a fence post.',
    expected: 'A snowy owl perched on a fence post.',
  },
  {
    language: 'en',
    model: 'minicpm-v',
    raw: 'In this image, I can see a group of children playing football on a grass field.<|im_end|>',
    expected: 'A group of children playing football on a grass field.',
  },
  {
    language: 'en',
    model: 'moondream',
    raw: ' A man riding a horse on a beach at sunset.',
    expected: 'A man riding a horse on a beach at sunset.',
  },
  {
    language: 'en',
    model: 'pixtral (prompt echoed)',
    raw: '<s>[INST]Describe this image as alt text[/INST] Sure! The image depicts a steaming cup of coffee on a wooden table next to an open book.</s>',
    expected: 'A steaming cup of coffee on a wooden table next to an open book.',
  },
  {
    language: 'en',
    model: 'phi-3 vision',
    raw: '<|assistant|>\nA red apple on a white plate beside a glass of milk.<|end|>',
    expected: 'A red apple on a white plate beside a glass of milk.',
  },
  {
    language: 'en',
    model: 'deepseek',
    raw: 'A hot air balloon over a desert canyon at sunrise.<｜end▁of▁sentence｜>',
    expected: 'A hot air balloon over a desert canyon at sunrise.',
  },
  {
    language: 'en',
    model: 'llama3.2-vision (bulleted one item)',
    raw: "Certainly! Here's the alt text:\n\n- A golden retriever catching a frisbee in a park.",
    expected: 'A golden retriever catching a frisbee in a park.',
  },
  {
    language: 'en',
    model: 'gemma3 (numbered one item)',
    raw: 'Here is the alt text:\n\n1. Two hikers on a snowy mountain ridge under a clear blue sky.',
    expected: 'Two hikers on a snowy mountain ridge under a clear blue sky.',
  },
  {
    language: 'en',
    model: 'llava (closing lines)',
    raw: 'A close-up of a bee collecting pollen from a purple lavender flower.\n\nI hope this helps! Let me know if you need a shorter version.',
    expected: 'A close-up of a bee collecting pollen from a purple lavender flower.',
  },
  {
    language: 'en',
    model: 'qwen2.5-vl (count and closing inline)',
    raw: "A chef slicing vegetables in a busy restaurant kitchen. (55 characters) Let me know if you'd like any changes!",
    expected: 'A chef slicing vegetables in a busy restaurant kitchen.',
  },
  {
    language: 'en',
    model: 'llama3.2-vision (AI disclaimer)',
    raw: "As an AI, I can't identify the people in this image, but I can describe it: A smiling couple in wedding clothes standing under an arch of white flowers.",
    expected: 'A smiling couple in wedding clothes standing under an arch of white flowers.',
  },
  {
    language: 'en',
    model: 'llava (apology)',
    raw: "I'm sorry, but I can't identify real people. The photo shows a man in a dark suit speaking at a podium with microphones.",
    expected: 'A man in a dark suit speaking at a podium with microphones.',
  },
  {
    language: 'en',
    model: 'gemma3 (bold label, quotes)',
    raw: '**Alt text:** "A bowl of ramen with a soft-boiled egg, sliced pork and green onions."',
    expected: 'A bowl of ramen with a soft-boiled egg, sliced pork and green onions.',
  },
  {
    language: 'en',
    model: 'qwen2.5-vl (label and count)',
    raw: 'Alt text: A bar chart comparing monthly rainfall in Oslo and Bergen, with Bergen higher every month. (91 characters)',
    expected: 'A bar chart comparing monthly rainfall in Oslo and Bergen, with Bergen higher every month.',
  },
  {
    language: 'en',
    model: 'gemma3 (list of alternatives)',
    raw: 'Here are a few options for alt text:\n\n1. **Short:** A black cat on a windowsill.\n2. **Detailed:** A black cat with green eyes sitting on a sunny windowsill next to a potted plant.\n\nLet me know which one works best!',
    expected: 'A black cat on a windowsill.',
  },
  {
    language: 'en',
    model: 'llama3.2-vision (emoji, greeting)',
    raw: "Sure thing! 😊 Here's a description of the image:\n\nA toddler in a yellow raincoat jumping in a puddle.",
    expected: 'A toddler in a yellow raincoat jumping in a puddle.',
  },
  {
    language: 'en',
    model: 'moondream (self-reference)',
    raw: 'I can see a red kite flying above a green hill with two people watching.',
    expected: 'A red kite flying above a green hill with two people watching.',
  },
  {
    language: 'en',
    model: 'gemma3 (greeting, compliment)',
    raw: 'Hello! What a lovely photo. A grandmother and her granddaughter baking cookies in a sunny kitchen.',
    expected: 'A grandmother and her granddaughter baking cookies in a sunny kitchen.',
  },
  {
    language: 'en',
    model: 'llava 1.6 (inline preamble)',
    raw: 'Okay, here is the alt text: A row of colourful beach huts along a pebble beach.',
    expected: 'A row of colourful beach huts along a pebble beach.',
  },
  {
    language: 'en',
    model: 'minicpm-v (heading)',
    raw: '### Alt Text\nA laptop on a desk showing a video call with four participants.',
    expected: 'A laptop on a desk showing a video call with four participants.',
  },
  {
    language: 'en',
    model: 'qwen2.5-vl (count in the label)',
    raw: 'Alt text (84 characters): A firefighter carrying a small dog out of a smoke-filled house.',
    expected: 'A firefighter carrying a small dog out of a smoke-filled house.',
  },
  {
    language: 'en',
    model: 'pixtral (dashed count)',
    raw: 'A mural of a whale painted on a brick wall — 42 characters',
    expected: 'A mural of a whale painted on a brick wall.',
  },
  {
    language: 'en',
    model: 'llama3.2-vision (note in parentheses)',
    raw: "A small white dog wearing a red sweater on a snowy path. (Note: I couldn't identify the breed.)",
    expected: 'A small white dog wearing a red sweater on a snowy path.',
  },
  {
    language: 'en',
    model: 'llava (answer to the shortening prompt)',
    raw: "Here's a shorter version:\n\nA firefighter carrying a dog out of a burning house.",
    expected: 'A firefighter carrying a dog out of a burning house.',
  },
  {
    language: 'en',
    model: 'gemma3 (answer to the shortening prompt)',
    raw: '**Shortened alt text (under 60 characters):** Firefighter rescuing a dog from a fire.',
    expected: 'Firefighter rescuing a dog from a fire.',
  },
  {
    language: 'en',
    model: 'hard negative',
    hard: true,
    raw: 'Sure-footed mountain goat standing on a narrow cliff ledge',
    expected: 'Sure-footed mountain goat standing on a narrow cliff ledge.',
  },
  {
    language: 'en',
    model: 'hard negative',
    hard: true,
    raw: 'Certainly fresh bread: three crusty loaves cooling on a wire rack',
    expected: 'Certainly fresh bread: three crusty loaves cooling on a wire rack.',
  },
  {
    language: 'en',
    model: 'hard negative',
    hard: true,
    raw: 'Here, a child plays in the sand at low tide while gulls circle overhead.',
    expected: 'Here, a child plays in the sand at low tide while gulls circle overhead.',
  },
  {
    language: 'en',
    model: 'hard negative (text in the image)',
    hard: true,
    raw: 'A shop window with a sign reading "Thank you!"',
    expected: 'A shop window with a sign reading "Thank you!"',
  },
  {
    language: 'en',
    model: 'hard negative (text in the image)',
    hard: true,
    raw: 'A poster with the words "I hope this helps" above a cartoon light bulb',
    expected: 'A poster with the words "I hope this helps" above a cartoon light bulb.',
  },
  {
    language: 'en',
    model: 'hard negative (closing-like sentence)',
    hard: true,
    raw: "A handwritten note on a fridge. Let me know when you're home, it says.",
    expected: "A handwritten note on a fridge. Let me know when you're home, it says.",
  },
  {
    language: 'en',
    model: 'hard negative (closing-like sentence)',
    hard: true,
    raw: 'A quiet street at dawn. If you look closely, a cat sits in an upstairs window.',
    expected: 'A quiet street at dawn. If you look closely, a cat sits in an upstairs window.',
  },
  {
    language: 'en',
    model: 'hard negative (closing-like sentence)',
    hard: true,
    raw: 'A thank-you card on a table. Hope is written in gold letters on the front.',
    expected: 'A thank-you card on a table. Hope is written in gold letters on the front.',
  },
  {
    language: 'en',
    model: 'hard negative',
    hard: true,
    raw: "Hello Kitty plush toy sitting on a child's bed",
    expected: "Hello Kitty plush toy sitting on a child's bed.",
  },
  {
    language: 'en',
    model: 'hard negative',
    hard: true,
    raw: "Sorry, we're closed sign hanging in a bakery door",
    expected: "Sorry, we're closed sign hanging in a bakery door.",
  },
  {
    language: 'en',
    model: 'hard negative',
    hard: true,
    raw: 'Okay hand gesture against a blue background',
    expected: 'Okay hand gesture against a blue background.',
  },
  {
    language: 'en',
    model: 'hard negative',
    hard: true,
    raw: 'Alternative rock band performing on a dimly lit stage',
    expected: 'Alternative rock band performing on a dimly lit stage.',
  },
  {
    language: 'en',
    model: 'hard negative',
    hard: true,
    raw: 'A description board at a museum entrance: opening hours and ticket prices.',
    expected: 'A description board at a museum entrance: opening hours and ticket prices.',
  },
  {
    language: 'en',
    model: 'hard negative (closing-like sentence)',
    hard: true,
    raw: 'Two friends waving at a train station. Feel-good colours of a summer evening.',
    expected: 'Two friends waving at a train station. Feel-good colours of a summer evening.',
  },

  {
    language: 'en',
    model: 'hard negative (text in the image)',
    hard: true,
    raw: '"Hello!" written in chalk on a blackboard',
    expected: '"Hello!" written in chalk on a blackboard.',
  },

  // --- German -----------------------------------------------------------------------------------
  {
    language: 'de',
    model: 'llava',
    raw: 'Hier ist der Alt-Text für das Bild:\n\n„Ein roter Traktor auf einem Feld bei Sonnenuntergang.“',
    expected: 'Ein roter Traktor auf einem Feld bei Sonnenuntergang.',
  },
  {
    language: 'de',
    model: 'gemma3',
    raw: 'Gerne! Hier ist ein Vorschlag für den Alternativtext:\n\n**Alternativtext:** Eine ältere Frau liest in einem Park eine Zeitung.\n\nIch hoffe, das hilft!',
    expected: 'Eine ältere Frau liest in einem Park eine Zeitung.',
  },
  {
    language: 'de',
    model: 'qwen2.5-vl',
    raw: 'Das Bild zeigt einen Fahrradfahrer auf einer verschneiten Straße.<|im_end|>',
    expected: 'Ein Fahrradfahrer auf einer verschneiten Straße.',
  },
  {
    language: 'de',
    model: 'minicpm-v (self-reference)',
    raw: 'Ich sehe einen kleinen Hund, der im Schnee spielt.',
    expected: 'Ein kleiner Hund, der im Schnee spielt.',
  },
  {
    language: 'de',
    model: 'llama3.2-vision (AI disclaimer)',
    raw: 'Als KI kann ich keine Personen identifizieren. Ein Mann in einem blauen Anzug hält eine Rede vor Publikum.',
    expected: 'Ein Mann in einem blauen Anzug hält eine Rede vor Publikum.',
  },
  {
    language: 'de',
    model: 'qwen2.5-vl (label and count)',
    raw: 'Bildbeschreibung: Zwei Kinder bauen eine Sandburg am Strand. (43 Zeichen)',
    expected: 'Zwei Kinder bauen eine Sandburg am Strand.',
  },
  {
    language: 'de',
    model: 'gemma3 (bulleted one item, closing)',
    raw: 'Natürlich! Hier ist die Bildbeschreibung:\n\n- Eine Tasse Kaffee neben einem aufgeschlagenen Buch auf einem Holztisch.\n\nWenn du eine kürzere Version möchtest, sag Bescheid.',
    expected: 'Eine Tasse Kaffee neben einem aufgeschlagenen Buch auf einem Holztisch.',
  },
  {
    language: 'de',
    model: 'llama3.2-vision (English preamble)',
    raw: 'Sure! Here is the alt text:\n\nEin Hund am Strand, der einem Ball hinterherläuft.',
    expected: 'Ein Hund am Strand, der einem Ball hinterherläuft.',
  },
  {
    language: 'de',
    model: 'llava (opening)',
    raw: 'Auf dem Bild sieht man einen alten Leuchtturm an der Küste.',
    expected: 'Ein alter Leuchtturm an der Küste.',
  },
  {
    language: 'de',
    model: 'qwen2.5-vl (answer to the shortening prompt)',
    raw: 'Kürzere Version: Ein Feuerwehrmann trägt einen Hund aus einem brennenden Haus.',
    expected: 'Ein Feuerwehrmann trägt einen Hund aus einem brennenden Haus.',
  },
  {
    language: 'de',
    model: 'hard negative',
    hard: true,
    raw: 'Klares Wasser in einem Bergsee, umgeben von Tannen',
    expected: 'Klares Wasser in einem Bergsee, umgeben von Tannen.',
  },
  {
    language: 'de',
    model: 'hard negative',
    hard: true,
    raw: 'Sicherheitshinweis an einer Baustelle: Betreten verboten.',
    expected: 'Sicherheitshinweis an einer Baustelle: Betreten verboten.',
  },

  // --- French -----------------------------------------------------------------------------------
  {
    language: 'fr',
    model: 'llava',
    raw: 'Voici le texte alternatif :\n\n« Un chat noir endormi sur un rebord de fenêtre ensoleillé. »',
    expected: 'Un chat noir endormi sur un rebord de fenêtre ensoleillé.',
  },
  {
    language: 'fr',
    model: 'gemma3',
    raw: "Bien sûr ! Voici une description de l'image : Une femme fait du vélo le long d'un canal à Amsterdam.",
    expected: "Une femme fait du vélo le long d'un canal à Amsterdam.",
  },
  {
    language: 'fr',
    model: 'pixtral',
    raw: "L'image montre un marché aux fleurs animé à Nice.</s>",
    expected: 'Un marché aux fleurs animé à Nice.',
  },
  {
    language: 'fr',
    model: 'minicpm-v (self-reference)',
    raw: "Je vois un enfant qui souffle des bougies sur un gâteau d'anniversaire.",
    expected: "Un enfant qui souffle des bougies sur un gâteau d'anniversaire.",
  },
  {
    language: 'fr',
    model: 'qwen2.5-vl (label, closing)',
    raw: "Texte alternatif : Un vieux pont de pierre au-dessus d'une rivière. J'espère que cela vous aide !",
    expected: "Un vieux pont de pierre au-dessus d'une rivière.",
  },
  {
    language: 'fr',
    model: 'llama3.2-vision (AI disclaimer)',
    raw: "En tant qu'IA, je ne peux pas identifier les personnes. Une joueuse de tennis frappe la balle sur un court en terre battue.",
    expected: 'Une joueuse de tennis frappe la balle sur un court en terre battue.',
  },
  {
    language: 'fr',
    model: 'gemma3 (bold label, closing)',
    raw: "**Texte alternatif :** Un bol de soupe fumante sur une table en bois. N'hésitez pas à me demander une version plus courte.",
    expected: 'Un bol de soupe fumante sur une table en bois.',
  },
  {
    language: 'fr',
    model: 'hard negative',
    hard: true,
    raw: 'Parfaitement alignés, des vélos de location devant une gare',
    expected: 'Parfaitement alignés, des vélos de location devant une gare.',
  },

  // --- Spanish ----------------------------------------------------------------------------------
  {
    language: 'es',
    model: 'llama3.2-vision',
    raw: '¡Claro! Aquí tienes el texto alternativo:\n\n"Un perro labrador corriendo por la orilla de la playa."',
    expected: 'Un perro labrador corriendo por la orilla de la playa.',
  },
  {
    language: 'es',
    model: 'qwen2.5-vl',
    raw: 'La imagen muestra a un hombre mayor tocando la guitarra en una plaza.<|im_end|>',
    expected: 'Un hombre mayor tocando la guitarra en una plaza.',
  },
  {
    language: 'es',
    model: 'gemma3 (closing lines)',
    raw: 'Texto alternativo: Una calle empedrada con casas de colores en un pueblo andaluz.\n\nEspero que te sirva. Si necesitas una versión más corta, avísame.',
    expected: 'Una calle empedrada con casas de colores en un pueblo andaluz.',
  },
  {
    language: 'es',
    model: 'minicpm-v (self-reference)',
    raw: 'Veo a una niña con un globo rojo en un parque.',
    expected: 'Una niña con un globo rojo en un parque.',
  },
  {
    language: 'es',
    model: 'llava (apology)',
    raw: 'Lo siento, no puedo identificar a personas reales. En la imagen se ve a una mujer hablando por teléfono en una oficina.',
    expected: 'Una mujer hablando por teléfono en una oficina.',
  },
  {
    language: 'es',
    model: 'llava (label and count)',
    raw: 'Descripción: Un plato de paella con gambas y mejillones. (48 caracteres)',
    expected: 'Un plato de paella con gambas y mejillones.',
  },
  {
    language: 'es',
    model: 'hard negative',
    hard: true,
    raw: 'Claros de bosque iluminados por el sol de la mañana',
    expected: 'Claros de bosque iluminados por el sol de la mañana.',
  },

  // --- Italian ----------------------------------------------------------------------------------
  {
    language: 'it',
    model: 'gemma3',
    raw: "Certo! Ecco il testo alternativo per l'immagine:\n\nUna gondola ormeggiata lungo un canale di Venezia al tramonto.",
    expected: 'Una gondola ormeggiata lungo un canale di Venezia al tramonto.',
  },
  {
    language: 'it',
    model: 'gemma3 (end of turn)',
    raw: "L'immagine mostra una pizza margherita appena sfornata su un tagliere di legno.<end_of_turn>",
    expected: 'Una pizza margherita appena sfornata su un tagliere di legno.',
  },
  {
    language: 'it',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Testo alternativo: Un ciclista in salita su una strada di montagna. Spero che questo sia utile!',
    expected: 'Un ciclista in salita su una strada di montagna.',
  },
  {
    language: 'it',
    model: 'minicpm-v (self-reference)',
    raw: 'Vedo un gatto tigrato che dorme su una sedia di vimini.',
    expected: 'Un gatto tigrato che dorme su una sedia di vimini.',
  },
  {
    language: 'it',
    model: 'hard negative',
    hard: true,
    raw: 'Certosa di Pavia vista dal giardino, con siepi potate',
    expected: 'Certosa di Pavia vista dal giardino, con siepi potate.',
  },

  // --- Portuguese -------------------------------------------------------------------------------
  {
    language: 'pt',
    model: 'llama3.2-vision',
    raw: 'Claro! Aqui está o texto alternativo:\n\nUm bonde amarelo subindo uma rua estreita em Lisboa.',
    expected: 'Um bonde amarelo subindo uma rua estreita em Lisboa.',
  },
  {
    language: 'pt',
    model: 'qwen2.5-vl',
    raw: 'A imagem mostra uma criança brincando com bolhas de sabão em um jardim.<|im_end|>',
    expected: 'Uma criança brincando com bolhas de sabão em um jardim.',
  },
  {
    language: 'pt',
    model: 'gemma3 (label, closing)',
    raw: 'Texto alternativo: Um prato de feijoada com arroz e couve. Espero que isso ajude!',
    expected: 'Um prato de feijoada com arroz e couve.',
  },
  {
    language: 'pt',
    model: 'llava (AI disclaimer)',
    raw: 'Como uma IA, não posso identificar pessoas. Um jogador de futebol comemora um gol em um estádio lotado.',
    expected: 'Um jogador de futebol comemora um gol em um estádio lotado.',
  },
  {
    language: 'pt',
    model: 'hard negative',
    hard: true,
    raw: 'Claridade suave sobre um campo de girassóis',
    expected: 'Claridade suave sobre um campo de girassóis.',
  },

  // --- Dutch ------------------------------------------------------------------------------------
  {
    language: 'nl',
    model: 'gemma3',
    raw: 'Natuurlijk! Hier is de alt-tekst:\n\nEen windmolen naast een kanaal met tulpenvelden op de achtergrond.',
    expected: 'Een windmolen naast een kanaal met tulpenvelden op de achtergrond.',
  },
  {
    language: 'nl',
    model: 'minicpm-v (self-reference)',
    raw: 'Op de foto zie ik een fietser die door de regen rijdt.',
    expected: 'Een fietser die door de regen rijdt.',
  },
  {
    language: 'nl',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Alt-tekst: Een kat die op een vensterbank in de zon ligt. Ik hoop dat dit helpt!',
    expected: 'Een kat die op een vensterbank in de zon ligt.',
  },
  {
    language: 'nl',
    model: 'hard negative',
    hard: true,
    raw: 'Goedemorgen staat op een krijtbord bij een café',
    expected: 'Goedemorgen staat op een krijtbord bij een café.',
  },

  // --- Polish -----------------------------------------------------------------------------------
  {
    language: 'pl',
    model: 'gemma3',
    raw: 'Oczywiście! Oto tekst alternatywny dla obrazu:\n\n„Czerwony tramwaj jadący ulicą w Krakowie.”',
    expected: 'Czerwony tramwaj jadący ulicą w Krakowie.',
  },
  {
    language: 'pl',
    model: 'qwen2.5-vl (opening)',
    raw: 'Na zdjęciu znajduje się stary drewniany kościół otoczony drzewami.',
    expected: 'Stary drewniany kościół otoczony drzewami.',
  },
  {
    language: 'pl',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Tekst alternatywny: Kobieta w czerwonym płaszczu spaceruje po parku jesienią. Mam nadzieję, że to pomoże!',
    expected: 'Kobieta w czerwonym płaszczu spaceruje po parku jesienią.',
  },
  {
    language: 'pl',
    model: 'llava (AI disclaimer)',
    raw: 'Jako model AI nie mogę identyfikować osób. Mężczyzna w kasku naprawia rower na chodniku.',
    expected: 'Mężczyzna w kasku naprawia rower na chodniku.',
  },
  {
    language: 'pl',
    model: 'hard negative',
    hard: true,
    raw: 'Dobrze oświetlona kuchnia z drewnianymi szafkami',
    expected: 'Dobrze oświetlona kuchnia z drewnianymi szafkami.',
  },

  // --- Swedish ----------------------------------------------------------------------------------
  {
    language: 'sv',
    model: 'gemma3',
    raw: 'Visst! Här är alt-texten:\n\nEn röd stuga vid en sjö omgiven av björkar.',
    expected: 'En röd stuga vid en sjö omgiven av björkar.',
  },
  {
    language: 'sv',
    model: 'qwen2.5-vl',
    raw: 'Bilden visar en fiskebåt i en hamn i skärgården.<|im_end|>',
    expected: 'En fiskebåt i en hamn i skärgården.',
  },
  {
    language: 'sv',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Alt-text: Två barn åker pulka nerför en snöig backe. Jag hoppas att detta hjälper!',
    expected: 'Två barn åker pulka nerför en snöig backe.',
  },
  { language: 'sv', model: 'minicpm-v (self-reference)', raw: 'Jag ser en älg som står i en dimmig skog.', expected: 'En älg som står i en dimmig skog.' },

  // --- Danish -----------------------------------------------------------------------------------
  {
    language: 'da',
    model: 'gemma3',
    raw: 'Selvfølgelig! Her er alt-teksten:\n\nEn cyklist på en brostensbelagt gade i København.',
    expected: 'En cyklist på en brostensbelagt gade i København.',
  },
  { language: 'da', model: 'qwen2.5-vl', raw: 'Billedet viser en rød postkasse foran et hvidt hus.', expected: 'En rød postkasse foran et hvidt hus.' },
  {
    language: 'da',
    model: 'llama3.2-vision (label, closings)',
    raw: 'Alt-tekst: En hund, der bader i havet. Jeg håber, det hjælper! Sig til, hvis du vil have en kortere version.',
    expected: 'En hund, der bader i havet.',
  },
  { language: 'da', model: 'minicpm-v (self-reference)', raw: 'Jeg ser en gammel vindmølle på en bakke.', expected: 'En gammel vindmølle på en bakke.' },

  // --- Norwegian (Bokmål) -----------------------------------------------------------------------
  {
    language: 'nb',
    model: 'gemma3',
    raw: 'Selvfølgelig! Her er alternativ tekst til bildet:\n\nEn fjord omgitt av bratte fjell under en blå himmel.',
    expected: 'En fjord omgitt av bratte fjell under en blå himmel.',
  },
  { language: 'nb', model: 'qwen2.5-vl', raw: 'Bildet viser en skiløper i et snødekt landskap.<|im_end|>', expected: 'En skiløper i et snødekt landskap.' },
  {
    language: 'nb',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Alt-tekst: Et rødt hus ved sjøen. Jeg håper dette hjelper!',
    expected: 'Et rødt hus ved sjøen.',
  },
  {
    language: 'nb',
    model: 'llava (AI disclaimer)',
    raw: 'Som en AI kan jeg ikke identifisere personer. En kvinne leser en bok på en benk.',
    expected: 'En kvinne leser en bok på en benk.',
  },

  // --- Finnish ----------------------------------------------------------------------------------
  {
    language: 'fi',
    model: 'gemma3',
    raw: 'Toki! Tässä on vaihtoehtoinen teksti kuvalle:\n\nPunainen mökki järven rannalla koivujen keskellä.',
    expected: 'Punainen mökki järven rannalla koivujen keskellä.',
  },
  {
    language: 'fi',
    model: 'qwen2.5-vl (opening)',
    raw: 'Kuvassa on koira, joka juoksee lumisella pellolla.',
    expected: 'Koira, joka juoksee lumisella pellolla.',
  },
  {
    language: 'fi',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Vaihtoehtoinen teksti: Kahvikuppi puupöydällä ikkunan vieressä. Toivottavasti tästä on apua!',
    expected: 'Kahvikuppi puupöydällä ikkunan vieressä.',
  },
  {
    language: 'fi',
    model: 'hard negative',
    hard: true,
    raw: 'Kerrostalo ja pyöräteline talvisella pihalla',
    expected: 'Kerrostalo ja pyöräteline talvisella pihalla.',
  },

  // --- Czech ------------------------------------------------------------------------------------
  {
    language: 'cs',
    model: 'gemma3',
    raw: 'Jistě! Zde je alternativní text k obrázku:\n\nStarý kamenný most přes řeku v Praze za soumraku.',
    expected: 'Starý kamenný most přes řeku v Praze za soumraku.',
  },
  { language: 'cs', model: 'qwen2.5-vl (opening)', raw: 'Na obrázku je žena s deštníkem na mokré ulici.', expected: 'Žena s deštníkem na mokré ulici.' },
  {
    language: 'cs',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Alternativní text: Kočka spící na parapetu okna. Doufám, že to pomůže!',
    expected: 'Kočka spící na parapetu okna.',
  },
  {
    language: 'cs',
    model: 'llava (disclaimer)',
    raw: 'Bohužel nemohu identifikovat konkrétní osoby. Muž v obleku stojí u řečnického pultu.',
    expected: 'Muž v obleku stojí u řečnického pultu.',
  },

  // --- Russian ----------------------------------------------------------------------------------
  {
    language: 'ru',
    model: 'gemma3',
    raw: 'Конечно! Вот альтернативный текст для изображения:\n\n«Рыжий кот спит на подоконнике рядом с цветочным горшком.»',
    expected: 'Рыжий кот спит на подоконнике рядом с цветочным горшком.',
  },
  {
    language: 'ru',
    model: 'qwen2.5-vl (opening)',
    raw: 'На изображении изображена девушка, которая читает книгу в парке.<|im_end|>',
    expected: 'Девушка, которая читает книгу в парке.',
  },
  {
    language: 'ru',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Альтернативный текст: Старая церковь на берегу реки зимой. Надеюсь, это поможет!',
    expected: 'Старая церковь на берегу реки зимой.',
  },
  {
    language: 'ru',
    model: 'llava (disclaimer)',
    raw: 'К сожалению, я не могу определять личности людей. Мужчина в синей куртке стоит у автобусной остановки.',
    expected: 'Мужчина в синей куртке стоит у автобусной остановки.',
  },
  {
    language: 'ru',
    model: 'hard negative',
    hard: true,
    raw: 'Хорошо освещённая кухня с деревянным столом',
    expected: 'Хорошо освещённая кухня с деревянным столом.',
  },
  {
    language: 'ru',
    model: 'hard negative (closing-like sentence)',
    hard: true,
    raw: 'Табличка на двери кафе. Этот текст написан мелом: «Мы открыты».',
    expected: 'Табличка на двери кафе. Этот текст написан мелом: «Мы открыты».',
  },

  // --- Ukrainian --------------------------------------------------------------------------------
  {
    language: 'uk',
    model: 'gemma3',
    raw: 'Звісно! Ось альтернативний текст для зображення:\n\nЖовтий трамвай їде вулицею старого міста.',
    expected: 'Жовтий трамвай їде вулицею старого міста.',
  },
  { language: 'uk', model: 'qwen2.5-vl (opening)', raw: 'На фото зображена жінка з букетом соняшників.', expected: 'Жінка з букетом соняшників.' },
  {
    language: 'uk',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Альтернативний текст: Собака біжить по снігу в лісі. Сподіваюся, це допоможе!',
    expected: 'Собака біжить по снігу в лісі.',
  },
  {
    language: 'uk',
    model: 'llava (disclaimer)',
    raw: 'На жаль, я не можу ідентифікувати людей. Чоловік у куртці грає на гітарі на вулиці.',
    expected: 'Чоловік у куртці грає на гітарі на вулиці.',
  },

  // --- Turkish ----------------------------------------------------------------------------------
  {
    language: 'tr',
    model: 'gemma3',
    raw: "Tabii ki! İşte görsel için alternatif metin:\n\nİstanbul Boğazı'nda gün batımında bir vapur.",
    expected: "İstanbul Boğazı'nda gün batımında bir vapur.",
  },
  {
    language: 'tr',
    model: 'llama3.2-vision (label, closing)',
    raw: 'Alternatif metin: Sahilde koşan siyah bir köpek. Umarım yardımcı olur!',
    expected: 'Sahilde koşan siyah bir köpek.',
  },
  {
    language: 'tr',
    model: 'llava (disclaimer)',
    raw: 'Maalesef gerçek kişileri tanımlayamam. Kırmızı montlu bir kadın parkta yürüyor.',
    expected: 'Kırmızı montlu bir kadın parkta yürüyor.',
  },
  {
    language: 'tr',
    model: 'hard negative',
    hard: true,
    raw: 'Tamamlanmamış bir yapboz, ahşap masanın üzerinde',
    expected: 'Tamamlanmamış bir yapboz, ahşap masanın üzerinde.',
  },

  // --- Japanese ---------------------------------------------------------------------------------
  {
    language: 'ja',
    model: 'qwen2.5-vl',
    raw: 'はい、以下は画像の代替テキストです。\n\n桜の木の下を歩く着物姿の女性。',
    expected: '桜の木の下を歩く着物姿の女性。',
  },
  {
    language: 'ja',
    model: 'gemma3 (label, closing)',
    raw: '代替テキスト：夕暮れの海辺で遊ぶ二人の子ども。お役に立てれば幸いです。',
    expected: '夕暮れの海辺で遊ぶ二人の子ども。',
  },
  {
    language: 'ja',
    model: 'llama3.2-vision (numbered one item, closing)',
    raw: 'もちろんです！こちらが代替テキストの案です：\n\n1. 雪に覆われた富士山と湖。\n\n他に何かあればお知らせください。',
    expected: '雪に覆われた富士山と湖。',
  },
  {
    language: 'ja',
    model: 'llava (apology)',
    raw: '申し訳ありませんが、人物を特定することはできません。スーツを着た男性が演台で話している。',
    expected: 'スーツを着た男性が演台で話している。',
  },
  { language: 'ja', model: 'qwen2.5-vl (count)', raw: '駅のホームで電車を待つ人々。（14文字）', expected: '駅のホームで電車を待つ人々。' },

  // --- Chinese ----------------------------------------------------------------------------------
  { language: 'zh', model: 'qwen2.5-vl', raw: '以下是图片的替代文本：\n\n一只橘猫趴在窗台上晒太阳。', expected: '一只橘猫趴在窗台上晒太阳。' },
  {
    language: 'zh',
    model: 'qwen3-vl (acknowledgement, opening)',
    raw: '好的！这张图片显示了一位老人在公园里打太极拳。<|im_end|>',
    expected: '一位老人在公园里打太极拳。',
  },
  {
    language: 'zh',
    model: 'minicpm-v (label, closing)',
    raw: '替代文本：雨中撑着红伞走在石板路上的女孩。希望这对你有帮助！',
    expected: '雨中撑着红伞走在石板路上的女孩。',
  },
  {
    language: 'zh',
    model: 'minicpm-v (self-reference)',
    raw: '在这张图片中，我看到一座古老的石桥横跨在河上。',
    expected: '一座古老的石桥横跨在河上。',
  },
  {
    language: 'zh',
    model: 'llava (AI disclaimer)',
    raw: '作为AI，我无法识别真实人物。一名穿西装的男子在讲台上发言。',
    expected: '一名穿西装的男子在讲台上发言。',
  },
  {
    language: 'zh',
    model: 'hard negative (text in the image)',
    hard: true,
    raw: '好的开始是成功的一半，写在教室的黑板上。',
    expected: '好的开始是成功的一半，写在教室的黑板上。',
  },

  // --- Korean -----------------------------------------------------------------------------------
  {
    language: 'ko',
    model: 'gemma3',
    raw: '네, 다음은 이미지에 대한 대체 텍스트입니다:\n\n눈 덮인 산 아래 호숫가에 있는 작은 오두막.',
    expected: '눈 덮인 산 아래 호숫가에 있는 작은 오두막.',
  },
  {
    language: 'ko',
    model: 'qwen2.5-vl (label, closing)',
    raw: '대체 텍스트: 비 오는 거리에서 우산을 쓰고 걷는 사람들. 도움이 되셨으면 좋겠습니다!',
    expected: '비 오는 거리에서 우산을 쓰고 걷는 사람들.',
  },
  {
    language: 'ko',
    model: 'llava (apology)',
    raw: '죄송하지만 실제 인물을 식별할 수 없습니다. 정장을 입은 남성이 연단에서 연설하고 있습니다.',
    expected: '정장을 입은 남성이 연단에서 연설하고 있습니다.',
  },
  { language: 'ko', model: 'hard negative', hard: true, raw: '네온사인이 빛나는 밤거리', expected: '네온사인이 빛나는 밤거리.' },

  // --- Arabic -----------------------------------------------------------------------------------
  {
    language: 'ar',
    model: 'gemma3',
    raw: 'بالتأكيد! إليك النص البديل للصورة:\n\nجمل يسير في الصحراء عند غروب الشمس.',
    expected: 'جمل يسير في الصحراء عند غروب الشمس.',
  },
  {
    language: 'ar',
    model: 'llama3.2-vision (label, closing)',
    raw: 'النص البديل: مسجد أبيض بقباب ذهبية تحت سماء زرقاء. آمل أن يكون هذا مفيدًا!',
    expected: 'مسجد أبيض بقباب ذهبية تحت سماء زرقاء.',
  },
  { language: 'ar', model: 'qwen2.5-vl (opening)', raw: 'في الصورة، طفل يلعب بكرة قدم في ساحة ترابية.', expected: 'طفل يلعب بكرة قدم في ساحة ترابية.' },
  {
    language: 'ar',
    model: 'llava (apology)',
    raw: 'عذرًا، لا أستطيع التعرف على الأشخاص. رجل يرتدي معطفًا أسود يقف بجانب سيارة.',
    expected: 'رجل يرتدي معطفًا أسود يقف بجانب سيارة.',
  },
  { language: 'ar', model: 'hard negative (text in the image)', hard: true, raw: 'مرحبا بكم لافتة على مدخل فندق', expected: 'مرحبا بكم لافتة على مدخل فندق.' },

  // --- Hindi ------------------------------------------------------------------------------------
  {
    language: 'hi',
    model: 'gemma3',
    raw: 'ज़रूर! यहाँ छवि के लिए वैकल्पिक पाठ है:\n\nबारिश में छाता लेकर चलती एक महिला।',
    expected: 'बारिश में छाता लेकर चलती एक महिला।',
  },
  {
    language: 'hi',
    model: 'llama3.2-vision (label, closing)',
    raw: 'वैकल्पिक पाठ: ताजमहल के सामने खड़े पर्यटक। मुझे आशा है कि यह मददगार होगा!',
    expected: 'ताजमहल के सामने खड़े पर्यटक।',
  },
  { language: 'hi', model: 'qwen2.5-vl (opening)', raw: 'इस तस्वीर में एक लड़का पतंग उड़ा रहा है।', expected: 'एक लड़का पतंग उड़ा रहा है।' },
  {
    language: 'hi',
    model: 'llava (apology)',
    raw: 'क्षमा करें, मैं लोगों की पहचान नहीं कर सकता। एक आदमी साइकिल पर सब्ज़ियाँ बेच रहा है।',
    expected: 'एक आदमी साइकिल पर सब्ज़ियाँ बेच रहा है।',
  },
]
