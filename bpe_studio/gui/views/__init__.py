"""Every widget of the app and its table models, one module per view: the training panel and
its inputs, the timeline, merge list, pair chart, compression plot, vocabulary table, token
editor and its ids, the tokenizer pickers, the inspector (why this token, step-through, merge
tree), Compare and Report. Each draws from the app model (``gui.model.app_model``) when its
events say so, and hands what the user does to the model or to the training controller."""
